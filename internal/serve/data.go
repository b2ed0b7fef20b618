package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/summary"
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
	// NoTasks says the loop's shape has no plan (ralph, review): no tasks
	// column to fill.
	NoTasks bool
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
	notApplicable(&r)
	return r
}

// notApplicable blanks what a loop's shape has not (a ralph or review loop
// has no plan, so no tasks, and no cycle gate) and, once such a loop
// ended, a gate it never reached: "pending" there would say it is still
// to come.
func notApplicable(r *Row) {
	if r.Shape != "" && r.Shape != spec.ShapeCycle {
		r.NoTasks = true
		if r.CycleGate == "pending" {
			r.CycleGate = "—"
		}
	}
	if r.NoTasks && !r.Live && r.Outcome != "" {
		if r.CycleGate == "pending" {
			r.CycleGate = "—"
		}
		if r.ObjectiveGate == "pending" {
			r.ObjectiveGate = "—"
		}
	}
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
	Round    int              `json:"round"`
	Findings []review.Finding `json:"findings"`
}

// How much of a loop's history a page shows: the rest is a link away.
const (
	pageRuns    = 50
	pageRecords = 300
	// maxRecordsN is the most records one read of the API takes: ?n= of
	// /records and of the stream, and the stream's backlog after ?after=
	// or Last-Event-ID.
	maxRecordsN = 2000
)

// LoopView is everything the loop page shows. Over the whole history it
// reads the loop's summary (package summary, kept in the engine's private
// folder); of the records themselves, only the last ones it shows.
type LoopView struct {
	Detail    ops.Detail
	Row       Row
	Cycles    []CycleView
	Runs      []RunView // the last pageRuns agent runs
	RunsTotal int
	Rounds    []RoundView
	Stop      *record.Event
	Review    string // review-report.md
	Records   []record.Event
	Older     string // the cursor of the records before Records ("": none)
	Seen      int    // records other than tool calls: the stream goes on after them
	CostPts   []costPoint
	FailPts   []failPoint
	Ralph     bool
	Summary   *summary.Summary
}

type costPoint struct {
	T   time.Time
	USD float64
}

type failPoint struct {
	N      int
	Failed int
	To     int // the last cycle of a bar that stands for several (their mean)
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// notToolCall keeps the records that are not tool calls.
func notToolCall(e record.Event) bool { return e.Event != record.ToolCall }

// loopView reads a loop's summary and last records into the page's view.
func loopView(e ops.Entry) LoopView {
	dir := ops.RunDirOf(e)
	d := loopdir.Dir(dir)
	sum, err := d.Summary()
	if err != nil || sum == nil {
		sum = summary.New()
	}
	last, _ := d.RecordsUpTo(sum, pageRecords, notToolCall)
	evs := make([]record.Event, len(last))
	for i, p := range last {
		evs[i] = p.Event
	}
	det, _ := ops.DetailWith(e, evs)
	v := LoopView{Detail: det, Row: rowOf(det.Status), Summary: sum, Seen: sum.Seen(), RunsTotal: sum.Runs}
	v.Ralph = v.Row.Shape == "ralph"
	if len(last) > 0 && sum.Seen() > len(last) {
		v.Older = encodeCursor(loopdir.At(last[0]))
	}
	v.Records = evs
	sort.SliceStable(v.Records, func(i, j int) bool { return v.Records[i].TS.Before(v.Records[j].TS) })
	cycles, fails := sum.Cycles, sum.FailCycle
	if v.Ralph {
		cycles, fails = sum.Iterations, sum.FailIteration
	}
	for _, c := range cycles {
		if c.N == 0 && len(c.Gates) == 0 {
			continue
		}
		cv := CycleView{N: c.N, Runs: c.Runs}
		for _, g := range c.Gates {
			cv.Gates = append(cv.Gates, GateView{Gate: g.Gate, Pass: g.Pass, Errors: g.Errors, Signal: g.Signal, Message: g.Message, Failed: g.Failed})
		}
		v.Cycles = append(v.Cycles, cv)
	}
	var total float64
	for _, b := range sum.Cost.B {
		total += b.Sum
		v.CostPts = append(v.CostPts, costPoint{time.UnixMilli(b.Last), total})
	}
	for _, b := range fails.B {
		p := failPoint{N: int(b.Key), Failed: int(b.Sum)}
		if fails.Width > 1 {
			p.To = int(b.Key + fails.Width - 1)
			if b.N > 0 {
				p.Failed = int(math.Round(b.Sum / float64(b.N)))
			}
		}
		v.FailPts = append(v.FailPts, p)
	}
	v.Runs = runsBetween(d, sum, sum.Runs-pageRuns+1, sum.Runs)
	v.Stop = sum.Stop
	for _, raw := range sum.Rounds {
		var rd RoundView
		if json.Unmarshal(raw, &rd) == nil {
			v.Rounds = append(v.Rounds, rd)
		}
	}
	if b, err := readCapped(d.Records(), loopdir.ReviewReportFile, 1<<20); err == nil {
		v.Review = string(b)
	}
	return v
}

// runsBetween reads agent runs from to to (numbered from 1, in the order
// they started), with their ends and commits: from the summary's mark
// before the first on, and no further than the end of the last one and
// of the run after it (a commit after a run belongs to it until another
// run ends).
func runsBetween(d loopdir.Dir, sum *summary.Summary, from, to int) []RunView {
	from, to = max(from, 1), min(to, sum.Runs)
	if from > to {
		return nil
	}
	m, ok := sum.Mark(from)
	if !ok {
		return nil
	}
	var runs []RunView
	open := map[string]int{} // run file + phase + task → index in runs
	n := m.N - 1
	endedAfter := false // a run after to has ended
	lastEnded := -1     // index in runs of the run that ended last (-1: one before from, or none)
	d.ScanFrom(loopdir.Cursor{File: m.File, Off: m.Off}, func(p record.Positioned) bool {
		ev := p.Event
		k := ev.Run + "\x00" + ev.Phase + "\x00" + ev.Task
		switch ev.Event {
		case record.AgentStart:
			n++
			if n > sum.Runs {
				return false // written after the summary was read
			}
			if n >= from && n <= to {
				runs = append(runs, RunView{N: n, Start: ev})
				open[k] = len(runs) - 1
			} else {
				delete(open, k)
			}
		case record.AgentEnd:
			if i, ok := open[k]; ok {
				x := ev
				runs[i].End = &x
				delete(open, k)
				lastEnded = i
			} else if n > to {
				endedAfter = true
				lastEnded = -1
			} else {
				lastEnded = -1
			}
		case record.Commit:
			h, _, _ := strings.Cut(ev.Message, " ")
			if ev.Pass != nil && *ev.Pass && commitHash.MatchString(h) && lastEnded >= 0 && runs[lastEnded].Commit == "" {
				runs[lastEnded].Commit = h
			}
		}
		return !endedAfter
	})
	return runs
}

// encodeCursor and decodeCursor turn a position in the records into a URL
// parameter and back: the record's time (Unix nanoseconds), the record
// file's name and the offset of its line.
func encodeCursor(c loopdir.Cursor) string {
	return strconv.FormatInt(c.TS.UnixNano(), 10) + "." + filepath.Base(c.File) + "." + strconv.FormatInt(c.Off, 10)
}

func decodeCursor(d loopdir.Dir, s string) (loopdir.Cursor, error) {
	bad := fmt.Errorf("the cursor %q is not TIME.FILE.OFFSET (a record's time, its file's name, an offset)", s)
	ts, rest, ok1 := strings.Cut(s, ".")
	i := strings.LastIndexByte(rest, '.')
	if !ok1 || i < 0 {
		return loopdir.Cursor{}, bad
	}
	name, off := rest[:i], rest[i+1:]
	nano, err1 := strconv.ParseInt(ts, 10, 64)
	n, err2 := strconv.ParseInt(off, 10, 64)
	if err1 != nil || err2 != nil || n < 0 || name == "" || strings.ContainsAny(name, "/\\") {
		return loopdir.Cursor{}, bad
	}
	files, err := d.RecordFiles()
	if err != nil {
		return loopdir.Cursor{}, err
	}
	for _, f := range files {
		if filepath.Base(f) == name {
			return loopdir.Cursor{TS: time.Unix(0, nano), File: f, Off: n}, nil
		}
	}
	return loopdir.Cursor{}, fmt.Errorf("the cursor names %q, which is not one of the loop's record files", name)
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

// runOfLoop is agent run n of the loop, and how many it has.
func runOfLoop(e ops.Entry, n int) (RunView, int, error) {
	d := loopdir.Dir(ops.RunDirOf(e))
	sum, err := d.Summary()
	if err != nil || sum == nil {
		sum = summary.New()
	}
	if n < 1 || n > sum.Runs {
		return RunView{}, sum.Runs, fmt.Errorf("no agent run %d (the loop has %d)", n, sum.Runs)
	}
	runs := runsBetween(d, sum, n, n)
	if len(runs) != 1 {
		return RunView{}, sum.Runs, fmt.Errorf("agent run %d could not be read from the records", n)
	}
	return runs[0], sum.Runs, nil
}

func runDetail(e ops.Entry, run RunView) (RunDetail, error) {
	dir := ops.RunDirOf(e)
	root := loopdir.Dir(dir).Records()
	rd := RunDetail{Run: run}
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
