// Package summary keeps what the dashboard, the API and the digest show
// over a loop's whole history — spend over time, failures and gate results
// per cycle, counts per event kind, the outcome, where each agent run
// starts — in a small file beside the spend tally, folded from the records
// as they are written. Its size is bounded whatever the history: the charts'
// points are merged into coarser buckets as they grow, only the last cycles'
// gate results are kept whole, and only every Stride-th run's position.
//
// It is folded like the spend tally (package spend): one record file after
// the other, each from the offset the last fold stopped at, so that what a
// fold reads is what was appended since. Folded again from nothing, the
// same records give the same summary.
package summary

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/record"
)

// Version is the summary's format; a saved summary of another one is
// folded again from the records.
const Version = 2

// The bounds of a summary.
const (
	MaxCostBuckets = 240 // points of the cost chart
	MaxFailBuckets = 240 // bars of the failures chart
	KeepCycles     = 20  // cycles (ralph: attempts) whose gate results are kept whole
	KeepRounds     = 8   // review rounds whose findings are kept
	MaxMarks       = 512 // positions of agent runs kept
	KeepRecent     = 64  // positions of the last agent runs kept
	maxText        = 2 << 10
	maxErrors      = 10
	maxRound       = 64 << 10
)

// Summary is a loop's history, summed up.
type Summary struct {
	Version int `json:"version"`
	// Offsets is how far each record file was folded; Last the time of
	// the newest record folded from each (Unix nanoseconds), so that a
	// tail knows which files to read.
	Offsets map[string]int64 `json:"offsets"`
	Last    map[string]int64 `json:"last"`
	// Records counts the well-formed records; Kinds, per event kind.
	Records int            `json:"records"`
	Kinds   map[string]int `json:"kinds"`
	// Runs counts agent runs (agent_start records), numbered from 1 in the
	// order they were written; Marks says where every Stride-th one starts.
	Runs   int    `json:"runs"`
	Stride int    `json:"stride"`
	Marks  []Mark `json:"marks"`
	// Recent says where each of the last KeepRecent runs starts: the
	// page's last runs are read from there.
	Recent []Mark `json:"recent"`
	// CostUSD is what the agent runs that ended (and the retried tries)
	// cost; Cost the same by time (Key: Unix seconds).
	CostUSD float64 `json:"cost_usd"`
	Cost    Buckets `json:"cost"`
	// Failures of the judging gates per cycle and per iteration (ralph's
	// attempts): Key the cycle, Sum the failed checks, N the cycles judged.
	FailCycle     Buckets `json:"fail_cycle"`
	FailIteration Buckets `json:"fail_iteration"`
	// The last cycles and iterations with their gate results.
	Cycles     []Cycle `json:"cycles"`
	Iterations []Cycle `json:"iterations"`
	// Stop is the last loop_stop, unless a loop_start came after it.
	Stop *record.Event `json:"stop,omitempty"`
	// Rounds are the last review rounds' findings (the review record's data).
	Rounds []json.RawMessage `json:"rounds,omitempty"`
	// Timeline is the records by hour and by day, for windows of time.
	Timeline Timeline `json:"timeline"`
}

// Mark is where agent run N's agent_start record is.
type Mark struct {
	N    int    `json:"n"`
	File string `json:"file"`
	Off  int64  `json:"off"`
}

// Buckets are sums over keys (a time, a cycle number), Width keys a
// bucket: when they would be more than their bound, the width doubles and
// neighbours merge. Keys are aligned to the width, so the buckets depend
// only on what was added, not on its order.
type Buckets struct {
	Width int64    `json:"width"`
	B     []Bucket `json:"b"`
}

// Bucket is one bucket: its first key, the sum and count of what fell in
// it, and the last key added (a time: the last run's end).
type Bucket struct {
	Key  int64   `json:"k"`
	Sum  float64 `json:"s"`
	N    int     `json:"n"`
	Last int64   `json:"l"`
}

// Cycle is one cycle's (ralph: attempt's) agent runs and gate verdicts.
type Cycle struct {
	N     int    `json:"n"`
	Runs  int    `json:"runs"`
	Gates []Gate `json:"gates,omitempty"`
}

// Gate is one gate's verdict, its texts cut to a few kilobytes.
type Gate struct {
	Gate    string   `json:"gate"`
	Pass    bool     `json:"pass"`
	Failed  int      `json:"failed"`
	Message string   `json:"message,omitempty"`
	Signal  string   `json:"signal,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// New is an empty summary.
func New() *Summary {
	return &Summary{Version: Version, Offsets: map[string]int64{}, Last: map[string]int64{}, Kinds: map[string]int{}, Stride: 1,
		Cost: Buckets{Width: 1}, FailCycle: Buckets{Width: 1}, FailIteration: Buckets{Width: 1}}
}

// Seen is the number of records other than tool calls.
func (s *Summary) Seen() int { return s.Records - s.Kinds[record.ToolCall] }

// Add folds one event; file and at say where its line starts.
func (s *Summary) Add(e record.Event, file string, at int64) {
	s.Records++
	s.Kinds[e.Event]++
	if t := e.TS.UnixNano(); !e.TS.IsZero() && (t > s.Last[file] || s.Last[file] == 0) {
		s.Last[file] = t
	}
	s.Timeline.addTime(e)
	switch e.Event {
	case record.AgentStart:
		s.Runs++
		s.Recent = append(s.Recent, Mark{N: s.Runs, File: file, Off: at})
		if len(s.Recent) > KeepRecent {
			s.Recent = append(s.Recent[:0:0], s.Recent[len(s.Recent)-KeepRecent:]...)
		}
		if (s.Runs-1)%s.Stride == 0 {
			s.Marks = append(s.Marks, Mark{N: s.Runs, File: file, Off: at})
			if len(s.Marks) > MaxMarks {
				s.Stride *= 2
				kept := s.Marks[:0]
				for _, m := range s.Marks {
					if (m.N-1)%s.Stride == 0 {
						kept = append(kept, m)
					}
				}
				s.Marks = kept
			}
		}
		s.cycle(&s.Cycles, e.Cycle).Runs++
		s.cycle(&s.Iterations, e.Iteration).Runs++
	case record.AgentEnd, record.AgentRetry:
		s.CostUSD += e.CostUSD
		if !e.TS.IsZero() {
			t := e.TS.Unix()
			s.Cost.add(t, e.CostUSD, e.TS.UnixMilli(), false, MaxCostBuckets)
		}
	case record.Verify:
		if e.Gate == "" {
			break
		}
		g := Gate{Gate: e.Gate, Pass: e.Pass != nil && *e.Pass, Message: cut(e.Message), Signal: cut(e.FailureSignal)}
		for _, c := range e.Checks {
			if !c.Pass {
				g.Failed++
			}
		}
		g.Failed += len(e.Errors)
		for i, x := range e.Errors {
			if i == maxErrors {
				g.Errors = append(g.Errors, "…")
				break
			}
			g.Errors = append(g.Errors, cut(x))
		}
		if c := s.cycle(&s.Cycles, e.Cycle); c != nil {
			c.Gates = append(c.Gates, g)
		}
		if c := s.cycle(&s.Iterations, e.Iteration); c != nil {
			c.Gates = append(c.Gates, g)
		}
		if JudgingGate(e.Gate) {
			s.FailCycle.add(int64(e.Cycle), float64(g.Failed), int64(e.Cycle), true, MaxFailBuckets)
			s.FailIteration.add(int64(e.Iteration), float64(g.Failed), int64(e.Iteration), true, MaxFailBuckets)
		}
	case record.Review:
		if e.Kind == "findings" && len(e.Data) > 0 && len(e.Data) <= maxRound && json.Valid(e.Data) {
			s.Rounds = append(s.Rounds, append(json.RawMessage(nil), e.Data...))
			if len(s.Rounds) > KeepRounds {
				s.Rounds = append([]json.RawMessage(nil), s.Rounds[len(s.Rounds)-KeepRounds:]...)
			}
		}
	case record.LoopStop:
		x := e
		x.Evidence = capList(x.Evidence)
		x.NotVerified = capList(x.NotVerified)
		x.Summary = cut(x.Summary)
		x.Data = nil
		s.Stop = &x
	case record.LoopStart:
		s.Stop = nil
	}
}

// JudgingGate: the gates whose failures the failures chart counts (not the
// baseline, not setup).
func JudgingGate(g string) bool {
	switch g {
	case "cycle", "objective", "verify", "review", "review-final", "review-fix", "review-writer", "ci", "pr-review":
		return true
	}
	return false
}

// cycle is cycle n of list (kept sorted by number, the last KeepCycles),
// made when missing; nil when it is older than every cycle kept.
func (s *Summary) cycle(list *[]Cycle, n int) *Cycle {
	l := *list
	i := sort.Search(len(l), func(i int) bool { return l[i].N >= n })
	if i < len(l) && l[i].N == n {
		return &l[i]
	}
	if i == 0 && len(l) >= KeepCycles {
		return nil
	}
	l = append(l, Cycle{})
	copy(l[i+1:], l[i:])
	l[i] = Cycle{N: n}
	if len(l) > KeepCycles {
		l = append(l[:0:0], l[1:]...)
		i--
	}
	*list = l
	return &l[i]
}

// add puts v at key k: distinct counts N once per run of the same key
// (a cycle), else once per add; last is the bucket's last key seen.
func (b *Buckets) add(k int64, v float64, last int64, distinct bool, max int) {
	if b.Width < 1 {
		b.Width = 1
	}
	key := floorTo(k, b.Width)
	i := sort.Search(len(b.B), func(i int) bool { return b.B[i].Key >= key })
	if i == len(b.B) || b.B[i].Key != key {
		b.B = append(b.B, Bucket{})
		copy(b.B[i+1:], b.B[i:])
		b.B[i] = Bucket{Key: key}
	}
	x := &b.B[i]
	x.Sum += v
	switch {
	case distinct:
		if x.N == 0 || x.Last != last {
			x.N++
		}
		x.Last = last
	default:
		x.N++
		if x.N == 1 || last > x.Last {
			x.Last = last
		}
	}
	for len(b.B) > 1 && (b.B[len(b.B)-1].Key-b.B[0].Key)/b.Width+1 > int64(max) {
		b.Width *= 2
		merged := b.B[:0]
		for _, y := range b.B {
			y.Key = floorTo(y.Key, b.Width)
			if n := len(merged); n > 0 && merged[n-1].Key == y.Key {
				m := &merged[n-1]
				m.Sum += y.Sum
				m.N += y.N
				m.Last = max64(m.Last, y.Last)
				continue
			}
			merged = append(merged, y)
		}
		b.B = merged
	}
}

func floorTo(k, w int64) int64 {
	q := k / w
	if k%w != 0 && k < 0 {
		q--
	}
	return q * w
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	s = s[:maxText]
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1] // not in the middle of a character
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s + "\n[cut]"
}

func capList(l []string) []string {
	if len(l) > 50 {
		l = append(l[:50:50], "…")
	}
	for i := range l {
		l[i] = cut(l[i])
	}
	return l
}

// Fold brings s up to date with the files list names, each from the
// offset it was folded to.
func (s *Summary) Fold(files []string) error {
	for _, path := range files {
		off, err := record.ScanFromPos(path, s.Offsets[path], func(e record.Event, at int64) bool {
			s.Add(e, path, at)
			return true
		})
		if err != nil {
			return err
		}
		s.Offsets[path] = off
	}
	return nil
}

// Load reads the summary saved at path and checks it against the record
// files: one that cannot be read, is of another version, breaks a bound,
// or was folded from a file that is gone or shorter than its offset gives
// a new, empty summary (to be folded from the start).
func Load(path string, files []string) *Summary {
	data, err := os.ReadFile(path)
	if err != nil {
		return New()
	}
	s := &Summary{}
	if json.Unmarshal(data, s) != nil || !s.ok() {
		return New()
	}
	known := map[string]bool{}
	for _, f := range files {
		known[f] = true
	}
	for f, off := range s.Offsets {
		fi, err := os.Stat(f)
		if !known[f] || err != nil || fi.Size() < off || off < 0 {
			return New()
		}
	}
	return s
}

// ok says whether a summary read back holds together.
func (s *Summary) ok() bool {
	if s.Version != Version || s.Offsets == nil || s.Last == nil || s.Kinds == nil || s.Stride < 1 || len(s.Marks) > MaxMarks ||
		len(s.Cycles) > KeepCycles || len(s.Iterations) > KeepCycles || len(s.Rounds) > KeepRounds || s.Runs < 0 {
		return false
	}
	n := 0
	for _, c := range s.Kinds {
		if c < 0 {
			return false
		}
		n += c
	}
	if n != s.Records || s.Kinds[record.AgentStart] != s.Runs {
		return false
	}
	for _, b := range []Buckets{s.Cost, s.FailCycle, s.FailIteration} {
		if b.Width < 1 || b.Width&(b.Width-1) != 0 || len(b.B) > max(MaxCostBuckets, MaxFailBuckets) ||
			!sort.SliceIsSorted(b.B, func(i, j int) bool { return b.B[i].Key < b.B[j].Key }) {
			return false
		}
	}
	for _, l := range [][]Mark{s.Marks, s.Recent} {
		for i, m := range l {
			if m.N < 1 || m.N > s.Runs || (i > 0 && m.N <= l[i-1].N) || m.Off < 0 {
				return false
			}
		}
	}
	if len(s.Recent) > KeepRecent {
		return false
	}
	return s.Timeline.ok()
}

// Save writes the summary to path (a new file renamed over the old one,
// mode 0600).
func (s *Summary) Save(path string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".summary*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := tmp.Close(); err != nil || werr != nil {
		return errors.Join(werr, err)
	}
	os.Chmod(tmp.Name(), 0o600)
	return os.Rename(tmp.Name(), path)
}

// Newest is the time of the newest record folded from file (zero: none
// with a time).
func (s *Summary) Newest(file string) time.Time {
	if t, ok := s.Last[file]; ok {
		return time.Unix(0, t)
	}
	return time.Time{}
}

// Mark returns the position of the last mark at or before run n (1-based):
// where to start reading to find run n, and that mark's run number.
func (s *Summary) Mark(n int) (Mark, bool) {
	if len(s.Recent) > 0 && s.Recent[0].N <= n {
		for i := len(s.Recent) - 1; i >= 0; i-- {
			if s.Recent[i].N <= n {
				return s.Recent[i], true
			}
		}
	}
	i := sort.Search(len(s.Marks), func(i int) bool { return s.Marks[i].N > n })
	if i == 0 {
		return Mark{}, false
	}
	return s.Marks[i-1], true
}

// String is a short description, for logs and tests.
func (s *Summary) String() string {
	var kinds []string
	for k, n := range s.Kinds {
		kinds = append(kinds, k+"="+itoa(n))
	}
	sort.Strings(kinds)
	return "records " + itoa(s.Records) + " runs " + itoa(s.Runs) + " [" + strings.Join(kinds, " ") + "]"
}

func itoa(n int) string { return strconv.Itoa(n) }
