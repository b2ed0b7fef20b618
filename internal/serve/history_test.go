package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/summary"
)

// wholeView is what the loop page drew before it read a summary: every
// record, in time order (the reference the summary must agree with).
type wholeView struct {
	runs    []RunView
	cycles  map[int]*CycleView
	cost    float64
	fails   map[int]int // judged cycles → failures
	stop    *record.Event
	records []record.Event // every record but tool calls
}

func computeWhole(evs []record.Event, ralph bool) wholeView {
	v := wholeView{cycles: map[int]*CycleView{}, fails: map[int]int{}}
	cyc := func(n int) *CycleView {
		if v.cycles[n] == nil {
			v.cycles[n] = &CycleView{N: n}
		}
		return v.cycles[n]
	}
	open := map[string]int{}
	for _, ev := range evs {
		n := ev.Cycle
		if ralph {
			n = ev.Iteration
		}
		if ev.Event != record.ToolCall {
			v.records = append(v.records, ev)
		}
		switch ev.Event {
		case record.Verify:
			if ev.Gate == "" {
				continue
			}
			g := GateView{Gate: ev.Gate, Pass: ev.Pass != nil && *ev.Pass, Signal: ev.FailureSignal, Message: ev.Message}
			for _, c := range ev.Checks {
				if !c.Pass {
					g.Failed++
				}
			}
			g.Failed += len(ev.Errors)
			cyc(n).Gates = append(cyc(n).Gates, g)
			if summary.JudgingGate(ev.Gate) {
				v.fails[n] += g.Failed
			}
		case record.AgentStart:
			v.runs = append(v.runs, RunView{N: len(v.runs) + 1, Start: ev})
			open[ev.Run+"\x00"+ev.Phase+"\x00"+ev.Task] = len(v.runs) - 1
			cyc(n).Runs++
		case record.AgentEnd, record.AgentRetry:
			v.cost += ev.CostUSD
			if ev.Event == record.AgentEnd {
				k := ev.Run + "\x00" + ev.Phase + "\x00" + ev.Task
				if i, ok := open[k]; ok {
					x := ev
					v.runs[i].End = &x
					delete(open, k)
				}
			}
		case record.Commit:
			h, _, _ := strings.Cut(ev.Message, " ")
			if ev.Pass != nil && *ev.Pass && commitHash.MatchString(h) {
				for i := len(v.runs) - 1; i >= 0; i-- {
					if v.runs[i].End != nil {
						if v.runs[i].Commit == "" {
							v.runs[i].Commit = h
						}
						break
					}
				}
			}
		case record.LoopStop:
			x := ev
			v.stop = &x
		case record.LoopStart:
			v.stop = nil
		}
	}
	return v
}

func sameRun(t *testing.T, what string, got, want RunView) {
	t.Helper()
	g, w := fmt.Sprintf("%d %s %v %s %s", got.N, got.Title(), got.Start.TS, got.Status(), got.Commit), fmt.Sprintf("%d %s %v %s %s", want.N, want.Title(), want.Start.TS, want.Status(), want.Commit)
	if g != w || (got.End == nil) != (want.End == nil) || got.End != nil && got.End.CostUSD != want.End.CostUSD {
		t.Errorf("%s: run %s, want %s", what, g, w)
	}
}

// At a long history, the page, the runs, the cost and the stream's backlog
// read from the summary and the last records equal what the whole history
// gives, for the fields both show.
func TestLongHistoryEqualsWhole(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := histgen.Write(dir, histgen.Options{Name: "long", Iterations: 3100, PerFile: 700}); err != nil {
		t.Fatal(err)
	}
	e, err := findLoop("long")
	if err != nil {
		t.Fatal(err)
	}
	d := loopdir.Dir(dir)
	evs, err := d.ReadRecordsInOrder()
	if err != nil {
		t.Fatal(err)
	}
	whole := computeWhole(evs, false)
	v := loopView(e)
	sum := v.Summary
	if sum.Stride < 2 || sum.FailCycle.Width < 2 {
		t.Fatalf("the history is too short to merge buckets: stride %d, width %d", sum.Stride, sum.FailCycle.Width)
	}

	// Runs: the last page, older pages, single runs.
	if v.RunsTotal != len(whole.runs) || len(v.Runs) != pageRuns {
		t.Fatalf("%d runs (%d shown), want %d", v.RunsTotal, len(v.Runs), len(whole.runs))
	}
	for i, r := range v.Runs {
		sameRun(t, "page", r, whole.runs[len(whole.runs)-pageRuns+i])
	}
	for _, n := range []int{1, 2, 7, 8, 9, 700, 701, 1555, 3099, 3100} {
		r, count, err := runOfLoop(e, n)
		if err != nil || count != len(whole.runs) {
			t.Fatalf("run %d: %v (count %d)", n, err, count)
		}
		sameRun(t, fmt.Sprint("run ", n), r, whole.runs[n-1])
	}
	for _, before := range []int{3051, 1000, 30} {
		got := runsBetween(d, sum, before-pageRuns, before-1)
		want := whole.runs[max(before-pageRuns, 1)-1 : before-1]
		if len(got) != len(want) {
			t.Fatalf("runs before %d: %d, want %d", before, len(got), len(want))
		}
		for i := range got {
			sameRun(t, fmt.Sprint("before ", before), got[i], want[i])
		}
	}
	if _, _, err := runOfLoop(e, 3101); err == nil {
		t.Error("run 3101 of 3100 was found")
	}

	// Records: the last page and the count the stream goes on from.
	if v.Seen != len(whole.records) {
		t.Errorf("seen %d, want %d", v.Seen, len(whole.records))
	}
	tail := whole.records[len(whole.records)-pageRecords:]
	if len(v.Records) != len(tail) {
		t.Fatalf("%d records shown, want %d", len(v.Records), len(tail))
	}
	for i := range tail {
		if !v.Records[i].TS.Equal(tail[i].TS) || v.Records[i].Event != tail[i].Event || v.Records[i].Message != tail[i].Message {
			t.Fatalf("record %d: %+v, want %+v", i, v.Records[i], tail[i])
		}
	}

	// The outcome, the cost, the timeline and the failures chart.
	if v.Stop == nil || whole.stop == nil || v.Stop.Reason != whole.stop.Reason || v.Stop.Summary != whole.stop.Summary {
		t.Errorf("stop %+v, want %+v", v.Stop, whole.stop)
	}
	if got := v.CostPts[len(v.CostPts)-1].USD; math.Abs(got-whole.cost) > 1e-6 || len(v.CostPts) > summary.MaxCostBuckets {
		t.Errorf("cost %v in %d points, want %v", got, len(v.CostPts), whole.cost)
	}
	var ns []int
	for n, c := range whole.cycles {
		if n > 0 || len(c.Gates) > 0 {
			ns = append(ns, n)
		}
	}
	sort.Ints(ns)
	ns = ns[len(ns)-len(v.Cycles):]
	t.Logf("stride %d, fail width %d, cost width %d, %d cycles shown from %d", sum.Stride, sum.FailCycle.Width, sum.Cost.Width, len(v.Cycles), ns[0])
	for i, n := range ns {
		got, want := v.Cycles[i], whole.cycles[n]
		if got.N != want.N || got.Runs != want.Runs || len(got.Gates) != len(want.Gates) {
			t.Fatalf("cycle %d: %+v, want %+v", n, got, want)
		}
		for j := range got.Gates {
			g, w := got.Gates[j], want.Gates[j]
			if g.Gate != w.Gate || g.Pass != w.Pass || g.Failed != w.Failed || g.Signal != w.Signal {
				t.Errorf("cycle %d gate %d: %+v, want %+v", n, j, g, w)
			}
		}
	}
	if len(v.Cycles) != summary.KeepCycles {
		t.Errorf("%d cycles in the timeline", len(v.Cycles))
	}
	for _, p := range v.FailPts {
		total, judged := 0, 0
		for n := p.N; n <= max(p.To, p.N); n++ {
			if f, ok := whole.fails[n]; ok {
				total += f
				judged++
			}
		}
		if want := int(math.Round(float64(total) / float64(judged))); judged == 0 || p.Failed != want {
			t.Errorf("failures of %d–%d: %d, want %d (%d judged)", p.N, p.To, p.Failed, want, judged)
		}
	}

	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		return rec
	}
	// The cost: the tally's answer is the whole history's.
	var got, want struct {
		Total struct {
			Runs    int     `json:"runs"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"total"`
		Attempts int `json:"attempts"`
		Passed   int `json:"passed"`
	}
	json.Unmarshal(get("/api/loops/long/cost").Body.Bytes(), &got)
	rep, _ := d.SpendUncached()
	data, _ := json.Marshal(rep)
	json.Unmarshal(data, &want)
	if got.Total.Runs != want.Total.Runs || math.Abs(got.Total.CostUSD-want.Total.CostUSD) > 1e-6 || got.Attempts != want.Attempts || got.Passed != want.Passed {
		t.Errorf("cost %+v, want %+v", got, want)
	}
	// Older records by cursor: the page before the last one.
	older := get("/loops/long/history?records=" + v.Older).Body.String()
	prev := whole.records[len(whole.records)-2*pageRecords]
	if !strings.Contains(older, "older records") || !strings.Contains(older, strings.ReplaceAll(ops.Summarize(prev), "'", "&#39;")) {
		t.Errorf("the older records' page lacks %q", ops.Summarize(prev))
	}
	if !strings.Contains(get("/loops/long").Body.String(), `/loops/`+e.Key+`/history?runs=3051`) {
		t.Error("the page does not link the older runs")
	}

	// The stream's backlog: the last 200 records, numbered from the start.
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, q := range []string{"?tools=0", "", "?tools=0&after=" + strconv.Itoa(len(whole.records)-7)} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/loops/long/records/stream"+q, nil)
		req.Header.Set("Host", "127.0.0.1")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		all := evs
		if strings.Contains(q, "tools=0") {
			all = whole.records
		}
		want := 200
		if strings.Contains(q, "after") {
			want = 7
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ids []int
		var got []record.Event
		for len(got) < want && sc.Scan() {
			line := sc.Text()
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				n, _ := strconv.Atoi(id)
				ids = append(ids, n)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var ev record.Event
				json.Unmarshal([]byte(data), &ev)
				got = append(got, ev)
			}
		}
		resp.Body.Close()
		if len(got) != want {
			t.Fatalf("%s: %d records in the backlog", q, len(got))
		}
		for i := range got {
			w := all[len(all)-want+i]
			if ids[i] != len(all)-want+i+1 || got[i].Event != w.Event || !got[i].TS.Equal(w.TS) {
				t.Fatalf("%s: backlog record %d is #%d %s %v, want #%d %s %v", q, i, ids[i], got[i].Event, got[i].TS, len(all)-want+i+1, w.Event, w.TS)
			}
		}
	}
}

// Bad page and cursor parameters are answered with a clear 400, never a
// panic.
func TestHistoryBadInput(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := histgen.Write(dir, histgen.Options{Name: "bad", Iterations: 30, PerFile: 10}); err != nil {
		t.Fatal(err)
	}
	tk, _, _ := OpenTokens(t.TempDir() + "/t.json")
	s, err := New(Config{Addr: "127.0.0.1:0", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/loops/bad/history":                                     "name the page",
		"/loops/bad/history?runs=x":                              "give a run number",
		"/loops/bad/history?runs=-3":                             "give a run number",
		"/loops/bad/history?records=junk":                        "is not TIME.FILE.OFFSET",
		"/loops/bad/history?records=1.x.2":                       "not one of the loop's record files",
		"/loops/bad/history?records=1.../etc/passwd.0":           "is not TIME.FILE.OFFSET",
		"/api/loops/bad/records?n=abc":                           "give a number of records",
		"/api/loops/bad/records?n=0":                             "give a number of records",
		"/api/loops/bad/records?before=99999999999999999999.a.1": "is not TIME.FILE.OFFSET",
		"/api/loops/bad/runs?n=0":                                "from 1 to 1000",
		"/api/loops/bad/runs?before=zz":                          "give a run number",
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: %d %s, want 400 saying %q", path, rec.Code, rec.Body, want)
		}
	}
	for _, path := range []string{"/loops/bad/history?runs=1", "/loops/bad/history?runs=999999", "/api/loops/bad/runs?before=1", "/api/loops/bad/runs?before=99999&n=1000"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 200 {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
