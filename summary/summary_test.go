package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// history writes a generated loop history into dir step by step: run files
// one after the other (a run that crashed leaves a torn last line), a side
// file written beside them, lines caught half written.
type history struct {
	t      *testing.T
	r      *rand.Rand
	dir    string
	files  []string
	run    string // the current run file ("": none)
	side   string
	ts     time.Time
	cycle  int
	iter   int
	half   map[string][]byte // the rest of a line half written, per file
	nfiles int
}

func (h *history) line(file string, e record.Event) {
	h.ts = h.ts.Add(time.Duration(h.r.IntN(5000)) * time.Millisecond)
	e.TS = h.ts
	e.Run = filepath.Base(file)
	data, _ := json.Marshal(e)
	data = append(data, '\n')
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if rest := h.half[file]; rest != nil {
		f.Write(rest)
		delete(h.half, file)
	}
	if h.r.IntN(20) == 0 {
		// Half written: the rest comes with the next line.
		k := h.r.IntN(len(data)-1) + 1
		f.Write(data[:k])
		h.half[file] = data[k:]
		return
	}
	f.Write(data)
}

func (h *history) newFile() string {
	h.nfiles++
	p := filepath.Join(h.dir, fmt.Sprintf("%04d.jsonl", h.nfiles))
	os.WriteFile(p, nil, 0o600)
	h.files = append(h.files, p)
	return p
}

// step writes one step of the loop.
func (h *history) step() {
	if h.run == "" {
		h.run = h.newFile()
		h.line(h.run, record.Event{Event: record.LoopStart})
	}
	pass := h.r.IntN(3) == 0
	switch k := h.r.IntN(14); {
	case k < 6:
		h.iter++
		ph := []string{"build", "plan", "review"}[h.r.IntN(3)]
		h.line(h.run, record.Event{Event: record.AgentStart, Phase: ph, Task: fmt.Sprint("T-", h.r.IntN(4)), Cycle: h.cycle, Iteration: h.iter})
		for i := h.r.IntN(4); i > 0; i-- {
			h.line(h.run, record.Event{Event: record.ToolCall, Tool: "Bash", Message: "go test"})
		}
		if h.r.IntN(6) == 0 {
			h.line(h.run, record.Event{Event: record.AgentRetry, Phase: ph, CostUSD: 0.001})
		}
		h.line(h.run, record.Event{Event: record.AgentEnd, Phase: ph, Task: "T-1", Cycle: h.cycle, Iteration: h.iter, Status: "ok", CostUSD: float64(h.r.IntN(100)) / 1000})
		if h.r.IntN(2) == 0 {
			h.line(h.run, record.Event{Event: record.Commit, Pass: &pass, Message: "abcdef1 message"})
		}
	case k < 9:
		gate := []string{"cycle", "objective", "verify", "baseline", "review"}[h.r.IntN(5)]
		checks := []record.Check{{Command: "go test", Pass: pass}, {Command: "go vet", Pass: h.r.IntN(2) == 0}}
		h.line(h.run, record.Event{Event: record.Verify, Gate: gate, Pass: &pass, Cycle: h.cycle, Iteration: h.iter, Checks: checks,
			FailureSignal: string(bytes.Repeat([]byte("FAIL é\n"), h.r.IntN(400))), Errors: []string{"e1", "e2"}[:h.r.IntN(3)]})
		if gate == "cycle" {
			h.cycle++
		}
	case k < 10:
		h.line(h.run, record.Event{Event: record.Review, Kind: "findings", Data: json.RawMessage(fmt.Sprintf(`{"round":%d,"findings":[]}`, h.r.IntN(9)))})
	case k < 11:
		h.line(h.run, record.Event{Event: record.Rollback, Message: "back"})
	case k < 12:
		if h.side == "" {
			h.side = h.newFile()
		}
		h.line(h.side, record.Event{Event: record.Warning, Message: "scheduler"})
	case k < 13:
		// The run ends, or crashes with a torn last line.
		if h.r.IntN(2) == 0 {
			h.line(h.run, record.Event{Event: record.LoopStop, Reason: "done", Summary: "ok"})
			if rest := h.half[h.run]; rest != nil {
				f, _ := os.OpenFile(h.run, os.O_APPEND|os.O_WRONLY, 0o600)
				f.Write(rest)
				f.Close()
				delete(h.half, h.run)
			}
		} else {
			f, _ := os.OpenFile(h.run, os.O_APPEND|os.O_WRONLY, 0o600)
			f.Write([]byte(`{"event":"agent_end","cost_usd":5`))
			f.Close()
			delete(h.half, h.run) // never finished
		}
		h.run = ""
	default:
		h.line(h.run, record.Event{Event: record.Land, Message: "landed"})
	}
}

func asJSON(t *testing.T, s *Summary) string {
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The summary kept as the history is written (folded now and then, saved
// and read back, sometimes lost or torn while saved) equals the one folded
// again from the records at the end.
func TestSummaryLiveEqualsRebuilt(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			h := &history{t: t, r: rand.New(rand.NewPCG(seed, 7)), dir: dir, ts: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), half: map[string][]byte{}}
			saved := filepath.Join(t.TempDir(), "summary.json")
			var older []byte
			steps := 100 + h.r.IntN(700)
			for i := 0; i < steps; i++ {
				h.step()
				switch h.r.IntN(40) {
				case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15:
					s := Load(saved, h.files)
					if err := s.Fold(h.files); err != nil {
						t.Fatal(err)
					}
					if err := s.Save(saved); err != nil {
						t.Fatal(err)
					}
				case 16:
					// A crash while it was saved: a torn summary.
					if data, err := os.ReadFile(saved); err == nil && len(data) > 2 {
						older = data
						os.WriteFile(saved, data[:h.r.IntN(len(data)-1)], 0o600)
					}
				case 17:
					// An older summary put back: behind, but sound.
					if older != nil {
						os.WriteFile(saved, older, 0o600)
					}
				}
			}
			live := Load(saved, h.files)
			if err := live.Fold(h.files); err != nil {
				t.Fatal(err)
			}
			again := New()
			if err := again.Fold(h.files); err != nil {
				t.Fatal(err)
			}
			if a, b := asJSON(t, live), asJSON(t, again); a != b {
				t.Fatalf("live and rebuilt differ:\nlive    %s\nrebuilt %s", a[:min(len(a), 3000)], b[:min(len(b), 3000)])
			}
			// The counts agree with a plain read of the records.
			evs, err := record.ReadAll(func() ([]string, error) { return h.files, nil })
			if err != nil {
				t.Fatal(err)
			}
			if again.Records != len(evs) {
				t.Errorf("%d records folded, %d read", again.Records, len(evs))
			}
			var cost float64
			for _, e := range evs {
				if e.Event == record.AgentEnd || e.Event == record.AgentRetry {
					cost += e.CostUSD
				}
			}
			if d := cost - again.CostUSD; d > 1e-9 || d < -1e-9 {
				t.Errorf("cost %v, want %v", again.CostUSD, cost)
			}
		})
	}
}

// A summary that does not check out is folded again from the start.
func TestSummaryLoadRejects(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.jsonl")
	os.WriteFile(f, []byte(`{"event":"warning"}`+"\n"), 0o600)
	s := New()
	s.Fold([]string{f})
	path := filepath.Join(dir, "s.json")
	s.Save(path)
	if got := Load(path, []string{f}); got.Records != 1 {
		t.Fatalf("a sound summary was not taken: %v", got)
	}
	for name, bad := range map[string]func(*Summary){
		"version":     func(s *Summary) { s.Version = 99 },
		"count":       func(s *Summary) { s.Records = 5 },
		"width":       func(s *Summary) { s.Cost.Width = 3 },
		"stride":      func(s *Summary) { s.Stride = 0 },
		"offset":      func(s *Summary) { s.Offsets[f] = 1 << 30 },
		"other file":  func(s *Summary) { s.Offsets[filepath.Join(dir, "b.jsonl")] = 0 },
		"mark":        func(s *Summary) { s.Marks = []Mark{{N: 4}} },
		"nil offsets": func(s *Summary) { s.Offsets = nil },
	} {
		c := Load(path, []string{f})
		bad(c)
		c.Save(path)
		if got := Load(path, []string{f}); got.Records != 0 {
			t.Errorf("%s: a summary that does not check out was taken", name)
		}
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if got := Load(path, []string{f}); got.Records != 0 {
		t.Error("junk was taken for a summary")
	}
}

// However long the history, the summary stays small.
func TestSummaryBounded(t *testing.T) {
	s := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := false
	for i := 1; i <= 200000; i++ {
		ts := t0.Add(time.Duration(i) * 7 * time.Second)
		s.Add(record.Event{Event: record.AgentStart, TS: ts, Cycle: i / 3, Iteration: i}, "f", int64(i)*500)
		s.Add(record.Event{Event: record.AgentEnd, TS: ts, CostUSD: 0.01, Cycle: i / 3, Iteration: i}, "f", int64(i)*500+200)
		s.Add(record.Event{Event: record.Verify, TS: ts, Gate: "cycle", Pass: &fail, Cycle: i / 3, Iteration: i,
			FailureSignal: string(bytes.Repeat([]byte("x"), 10000)), Checks: []record.Check{{}}}, "f", int64(i)*500+300)
	}
	data, _ := json.Marshal(s)
	if len(data) > 512<<10 {
		t.Errorf("the summary of 200,000 runs is %d bytes", len(data))
	}
	if len(s.Cost.B) > MaxCostBuckets || len(s.FailCycle.B) > MaxFailBuckets || len(s.Marks) > MaxMarks || len(s.Cycles) > KeepCycles {
		t.Errorf("bounds broken: %d cost, %d fail, %d marks, %d cycles", len(s.Cost.B), len(s.FailCycle.B), len(s.Marks), len(s.Cycles))
	}
	if m, ok := s.Mark(150001); !ok || m.N > 150001 || 150001-m.N >= s.Stride {
		t.Errorf("mark for run 150001: %+v (stride %d)", m, s.Stride)
	}
	var failed float64
	for _, b := range s.FailCycle.B {
		failed += b.Sum
	}
	if failed != 200000 {
		t.Errorf("failures summed over the buckets: %v", failed)
	}
	t.Logf("%d bytes, stride %d, cost width %ds, fail width %d", len(data), s.Stride, s.Cost.Width, s.FailCycle.Width)
}
