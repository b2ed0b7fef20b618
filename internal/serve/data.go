package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/spec"
)

// findLoop resolves a loop in a URL: its registry key, else its name when
// one registered loop has it. Unlike the CLI's lookup it never takes a
// path: a URL names only loops the registry knows.
func findLoop(name string) (ops.Entry, error) {
	entries, _ := ops.Entries()
	var hits []ops.Entry
	for _, e := range entries {
		if e.Key == name {
			return e, nil
		}
		if e.Name == name {
			hits = append(hits, e)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return ops.Entry{}, fmt.Errorf("%w %q", ops.ErrNotFound, name)
	}
	var keys []string
	for _, h := range hits {
		keys = append(keys, h.Key)
	}
	return ops.Entry{}, fmt.Errorf("%d loops are named %q; name one by its key: %s", len(hits), name, strings.Join(keys, ", "))
}

// Row is one loop in the list.
type Row struct {
	Key, Name, Shape, State, Phase string
	Cycle                          int
	CycleGate, ObjectiveGate       string
	TasksDone, TasksTotal          int
	CostUSD, BudgetUSD             float64
	Outcome                        string
	LastActivity                   time.Time
	Line                           string
	Live                           bool
	Question                       string // the id of the question the loop waits on
}

func rowOf(st ops.Status) Row {
	r := Row{Key: st.Key, Name: st.Name, State: st.State, Line: st.Line, Live: live(st.State)}
	if l := st.Loop; l != nil {
		r.Shape, r.Phase, r.Cycle = l.Shape, l.Phase, l.Cycle
		r.CycleGate, r.ObjectiveGate = gateWord(l.CycleGate), gateWord(l.ObjectiveGate)
		r.CostUSD = l.CostUSD
	}
	if r.Shape == "" {
		r.Shape = "cycle"
	}
	if r.CycleGate == "" {
		r.CycleGate, r.ObjectiveGate = "pending", "pending"
	}
	for _, t := range st.Tasks {
		r.TasksTotal++
		if t.Passes {
			r.TasksDone++
		}
	}
	if st.Outcome != "" {
		r.Outcome = loop.Title(st.Outcome)
	}
	if f := loopFile(st.Entry); f != "" {
		if l, err := spec.Load(f); err == nil {
			r.BudgetUSD = l.Budget.CostUSD
			r.Shape = l.Shape
		}
	}
	if st.Question != nil {
		r.Question = st.Question.ID
	}
	r.LastActivity = lastActivity(st)
	return r
}

func loopFile(e ops.Entry) string {
	if e.RunFile != "" {
		return e.RunFile
	}
	return e.LoopFile
}

func live(state string) bool {
	return state == ops.StateRunning || state == ops.StatePaused || state == ops.StateStarting || state == ops.StateWaiting
}

func gateWord(g string) string {
	switch g {
	case "", "pending":
		return "pending"
	case "not_verified":
		return "NOT VERIFIED"
	}
	return g
}

// lastActivity is when the loop last wrote a record (or its state).
func lastActivity(st ops.Status) time.Time {
	var t time.Time
	if st.Loop != nil && st.Loop.Records != "" {
		if fi, err := os.Stat(st.Loop.Records); err == nil {
			t = fi.ModTime()
		}
	}
	if fi, err := os.Stat(loopdir.Dir(ops.RunDirOf(st.Entry)).State()); err == nil && fi.ModTime().After(t) {
		t = fi.ModTime()
	}
	return t
}

// listRows is every loop, live ones first, then by last activity.
func listRows() ([]Row, []ops.Status) {
	entries, _ := ops.Entries()
	sts := make([]ops.Status, len(entries))
	rows := make([]Row, len(entries))
	for i, e := range entries {
		sts[i] = ops.Inspect(e)
		rows[i] = rowOf(sts[i])
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Live != rows[j].Live {
			return rows[i].Live
		}
		return rows[i].LastActivity.After(rows[j].LastActivity)
	})
	return rows, sts
}

// GateView is one gate's verdict in one cycle.
type GateView struct {
	Gate    string
	Pass    bool
	Checks  []record.Check
	Errors  []string
	Signal  string
	Message string
	Failed  int
}

// CycleView is one cycle (ralph: one attempt) of the timeline.
type CycleView struct {
	N     int
	Gates []GateView
	Runs  int
}

// RunView is one agent run, from its agent_start (and agent_end) records.
type RunView struct {
	N      int
	Start  record.Event
	End    *record.Event
	Commit string // the commit made after it, when the loop commits
}

// Title names a run: "build T-002 (cycle 1)".
func (r RunView) Title() string {
	t := r.Start.Phase
	if r.Start.Task != "" {
		t += " " + r.Start.Task
	}
	return t
}

// Status is the run's end status, or "running".
func (r RunView) Status() string {
	if r.End == nil {
		return "running"
	}
	return r.End.Status
}

// RoundView is one review round's findings.
type RoundView struct {
	Round    int            `json:"round"`
	Findings []loop.Finding `json:"findings"`
}

// LoopView is everything the loop page shows.
type LoopView struct {
	Detail   ops.Detail
	Row      Row
	Cycles   []CycleView
	Runs     []RunView
	Rounds   []RoundView
	Stop     *record.Event
	Review   string // review-report.md
	Records  []record.Event
	Seen     int // records other than tool calls: the stream goes on after them
	CostPts  []costPoint
	FailPts  []failPoint
	Ralph    bool
	AllEvent []record.Event
}

type costPoint struct {
	T   time.Time
	USD float64
}

type failPoint struct {
	N      int
	Failed int
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// loopView reads a loop's files into the page's view.
func loopView(e ops.Entry) LoopView {
	dir := ops.RunDirOf(e)
	evs := readRecords(dir)
	d, _ := ops.DetailWith(e, evs)
	v := LoopView{Detail: d, Row: rowOf(d.Status)}
	v.Ralph = v.Row.Shape == "ralph"
	v.AllEvent = evs
	cycles := map[int]*CycleView{}
	cyc := func(n int) *CycleView {
		c := cycles[n]
		if c == nil {
			c = &CycleView{N: n}
			cycles[n] = c
		}
		return c
	}
	var total float64
	open := map[string]int{} // run file + phase + task → index in v.Runs
	for _, ev := range evs {
		n := ev.Cycle
		if v.Ralph {
			n = ev.Iteration
		}
		switch ev.Event {
		case record.Verify:
			if ev.Gate == "" {
				continue
			}
			g := GateView{Gate: ev.Gate, Pass: ev.Pass != nil && *ev.Pass, Checks: ev.Checks, Errors: ev.Errors, Signal: ev.FailureSignal, Message: ev.Message}
			for _, c := range ev.Checks {
				if !c.Pass {
					g.Failed++
				}
			}
			g.Failed += len(ev.Errors)
			cyc(n).Gates = append(cyc(n).Gates, g)
		case record.AgentStart:
			v.Runs = append(v.Runs, RunView{N: len(v.Runs) + 1, Start: ev})
			open[ev.Run+"\x00"+ev.Phase+"\x00"+ev.Task] = len(v.Runs) - 1
			cyc(n).Runs++
		case record.AgentEnd, record.AgentRetry:
			total += ev.CostUSD
			v.CostPts = append(v.CostPts, costPoint{ev.TS, total})
			if ev.Event == record.AgentEnd {
				k := ev.Run + "\x00" + ev.Phase + "\x00" + ev.Task
				if i, ok := open[k]; ok {
					x := ev
					v.Runs[i].End = &x
					delete(open, k)
				}
			}
		case record.Commit:
			h, _, _ := strings.Cut(ev.Message, " ")
			if ev.Pass != nil && *ev.Pass && commitHash.MatchString(h) {
				for i := len(v.Runs) - 1; i >= 0; i-- {
					if v.Runs[i].End != nil {
						if v.Runs[i].Commit == "" {
							v.Runs[i].Commit = h
						}
						break
					}
				}
			}
		case record.Review:
			if ev.Kind == "findings" && len(ev.Data) > 0 {
				var rd struct {
					Round    int            `json:"round"`
					Findings []loop.Finding `json:"findings"`
				}
				if json.Unmarshal(ev.Data, &rd) == nil {
					v.Rounds = append(v.Rounds, RoundView{Round: rd.Round, Findings: rd.Findings})
				}
			}
		case record.LoopStop:
			x := ev
			v.Stop = &x
		case record.LoopStart:
			v.Stop = nil
		}
	}
	for _, c := range cycles {
		if c.N > 0 || len(c.Gates) > 0 {
			v.Cycles = append(v.Cycles, *c)
		}
	}
	sort.Slice(v.Cycles, func(i, j int) bool { return v.Cycles[i].N < v.Cycles[j].N })
	for _, c := range v.Cycles {
		f, judged := 0, false
		for _, g := range c.Gates {
			if isJudgingGate(g.Gate) {
				f += g.Failed
				judged = true
			}
		}
		if judged {
			v.FailPts = append(v.FailPts, failPoint{c.N, f})
		}
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event != record.ToolCall {
			v.Seen++
			if len(v.Records) < 300 {
				v.Records = append(v.Records, evs[i])
			}
		}
	}
	slicesReverse(v.Records)
	if b, err := readCapped(loopdir.Dir(dir).Records(), loopdir.ReviewReportFile, 1<<20); err == nil {
		v.Review = string(b)
	}
	return v
}

// isJudgingGate: the gates whose failures the failures-per-cycle chart
// counts (not the baseline, not setup).
func isJudgingGate(g string) bool {
	switch g {
	case "cycle", "objective", "verify", "review", "review-final", "review-fix", "review-writer":
		return true
	}
	return false
}

func slicesReverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// errOutside says a path in a record points outside working-records.
var errOutside = errors.New("the file is not inside the loop's working-records")

// recordsRel turns a path from a record (absolute, or relative to the loop
// directory) into a path inside working-records, or fails.
func recordsRel(dir, p string) (string, error) {
	if p == "" {
		return "", os.ErrNotExist
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	rel, err := filepath.Rel(loopdir.Dir(dir).Records(), filepath.Clean(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", errOutside
	}
	return rel, nil
}

// readCapped reads rel inside root (never leaving it, symbolic links
// included: os.Root) and returns at most max bytes: the file's tail, after
// a line saying what was cut, when it is longer.
func readCapped(root, rel string, max int64) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	if fi.Size() <= max {
		return io.ReadAll(io.LimitReader(f, max))
	}
	if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	head := fmt.Sprintf("[the first %d bytes of %d are not shown]\n", fi.Size()-max, fi.Size())
	return append([]byte(head), b...), err
}

// RunDetail is one agent run's prompt, transcript and diff.
type RunDetail struct {
	Run        RunView
	Prompt     string
	Transcript []Block
	RawLen     int
	Diff       string
	DiffNote   string
}

// maxShown caps what a page or API answer carries of one file.
const maxShown = 2 << 20

func runDetail(e ops.Entry, runs []RunView, n int) (RunDetail, error) {
	if n < 1 || n > len(runs) {
		return RunDetail{}, fmt.Errorf("no agent run %d (the loop has %d)", n, len(runs))
	}
	dir := ops.RunDirOf(e)
	root := loopdir.Dir(dir).Records()
	rd := RunDetail{Run: runs[n-1]}
	if rel, err := recordsRel(dir, rd.Run.Start.PromptFile); err == nil {
		if b, err := readCapped(root, rel, maxShown); err == nil {
			rd.Prompt = string(b)
		}
	}
	tr := ""
	if rd.Run.End != nil {
		tr = rd.Run.End.Transcript
	} else if p := rd.Run.Start.PromptFile; strings.HasSuffix(p, ".prompt.md") {
		tr = strings.TrimSuffix(p, ".prompt.md") + ".log" // the live transcript
	}
	if rel, err := recordsRel(dir, tr); err == nil {
		if b, err := readCapped(root, rel, maxShown); err == nil {
			rd.RawLen = len(b)
			rd.Transcript = renderTranscript(rd.Run.Start.Backend, b)
		}
	}
	switch {
	case rd.Run.Commit != "":
		out, err := exec.Command("git", safegit.Args("-C", dir, "show", "--no-color", "--no-ext-diff", "--stat", "--patch", "--format=commit %H%n%s%n", rd.Run.Commit, "--", ".")...).Output()
		if err != nil {
			rd.DiffNote = "git show " + rd.Run.Commit + " failed: " + err.Error()
		}
		if len(out) > maxShown {
			out = append(out[:maxShown], "\n[diff cut]\n"...)
		}
		rd.Diff = string(out)
	case rd.Run.End != nil && len(rd.Run.End.FilesChanged) > 0:
		rd.DiffNote = "The loop does not commit (no git, or git.commit: false), so there is no diff; the files this run changed:"
		rd.Diff = strings.Join(rd.Run.End.FilesChanged, "\n")
	case rd.Run.End != nil:
		rd.DiffNote = "This run changed no file."
	}
	return rd, nil
}
