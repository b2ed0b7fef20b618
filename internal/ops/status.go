package ops

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// Run states of a loop, as `list` and `status` show them.
const (
	StateRunning  = "running"
	StatePaused   = "paused"
	StateStarting = "starting"
	StateFinished = "finished"
	// StateInterrupted: the run was stopped (a signal, `looprinter stop`)
	// before it reached an ending; it resumes where it was.
	StateInterrupted = "interrupted"
	StateCrashed     = "crashed"
	StateNotStarted  = "not started"
	StateGone        = "gone" // its directory no longer exists
	// StateWaiting: the run waits for the operator's answer to an agent's
	// question (looprinter answer).
	StateWaiting = "waiting"
)

// Status is everything the files say about one loop.
type Status struct {
	Entry
	State        string       `json:"state"`
	PID          int          `json:"pid,omitempty"`
	PausePending bool         `json:"pause_pending,omitempty"` // paused, or will pause before the next agent run
	Loop         *loop.State  `json:"loop_state,omitempty"`
	Plan         *loop.Plan   `json:"plan,omitempty"`
	Line         string       `json:"line"`
	Outcome      string       `json:"outcome,omitempty"`
	ExitCode     *int         `json:"exit_code,omitempty"`
	Now          time.Time    `json:"-"`
	Tasks        []TaskStatus `json:"tasks,omitempty"`
	// The operator channel: the question the loop waits on and the guidance
	// no agent run has acknowledged yet.
	Question *loop.Question    `json:"question,omitempty"`
	Guidance []PendingGuidance `json:"guidance,omitempty"`
	// Private is what the agents wrote to HOME and the caches, in the
	// engine's private folder, against private_budget.
	Private *PrivateUse `json:"private,omitempty"`
}

// TaskStatus is one plan task as status shows it.
type TaskStatus struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Passes bool   `json:"passes"`
	Active bool   `json:"active,omitempty"` // the build run is on it now
	// Waits lists the tasks of its depends_on that do not pass yet: it
	// runs after them.
	Waits []string `json:"waits,omitempty"`
}

// Inspect reads a loop's state from its files. It never blocks on the loop.
func Inspect(e Entry) Status {
	s := Status{Entry: e, Now: time.Now()}
	dir := RunDirOf(e)
	if _, err := os.Stat(dir); err != nil {
		s.State = StateGone
		s.Line = "its directory " + dir + " no longer exists"
		return s
	}
	st, err := loop.LoadState(dir)
	if err != nil {
		s.State = StateCrashed
		s.Line = err.Error()
		return s
	}
	started := !st.StartedAt.IsZero()
	if started {
		s.Loop = st
	}
	s.Plan = loop.CurrentPlan(dir, st)
	live, pid := loopdir.Locked(dir)
	_, perr := os.Stat(loopdir.Dir(dir).Pause())
	s.PausePending = perr == nil
	switch {
	case live:
		s.State, s.PID = StateRunning, pid
		if s.PausePending && PausedNow(dir) {
			s.State = StatePaused
		} else if st.Question != nil || st.PlanWait != nil {
			s.State = StateWaiting
		}
	case e.LauncherPID != 0 && Alive(e.LauncherPID) && (!started || st.Outcome == ""):
		// start spawned a run that has not taken the lock yet.
		s.State, s.PID = StateStarting, e.LauncherPID
	case !started:
		s.State = StateNotStarted
	case st.Outcome != "":
		s.setOutcome(st)
	default:
		if ev, ok := record.StopOf(st.Records); ok {
			// The run wrote its final record but could not save its state
			// (a full disk): the record is the truth.
			st.Outcome, st.ExitCode = ev.Reason, 0
			if ev.ExitCode != nil {
				st.ExitCode = *ev.ExitCode
			}
			s.setOutcome(st)
			break
		}
		// The state names no outcome, no run holds the lock and the records
		// end without loop_stop: the run died.
		s.State, s.PID = StateCrashed, st.PID
	}
	c := channelFrom(dir, st)
	s.Question, s.Guidance = c.Question, c.Guidance
	s.Tasks = taskStatuses(s.Plan, st, s.State == StateRunning || s.State == StatePaused || s.State == StateWaiting)
	s.Line = Line(st, s.Plan, s.State)
	if started {
		pu := PrivateUseOf(e)
		s.Private = &pu
	}
	return s
}

func (s *Status) setOutcome(st *loop.State) {
	s.State = StateFinished
	if st.Outcome == loop.ReasonInterrupted {
		s.State = StateInterrupted
	}
	s.Outcome = st.Outcome
	s.ExitCode = &st.ExitCode
}

// Stopped says whether the loop's run has ended with a final record:
// finished, or interrupted (and resumable).
func (s Status) Stopped() bool { return s.State == StateFinished || s.State == StateInterrupted }

// PausedNow says whether the engine has recorded that it is paused (rather
// than still finishing an agent run before it pauses).
func PausedNow(dir string) bool {
	st, err := loop.LoadState(dir)
	if err != nil || st.Records == "" {
		return false
	}
	last := record.LastOf(st.Records, "paused", "resumed", "agent_start")
	return last == "paused"
}

func taskStatuses(p *loop.Plan, st *loop.State, live bool) []TaskStatus {
	if p == nil {
		return nil
	}
	out := make([]TaskStatus, 0, len(p.Tasks))
	active := map[string]bool{}
	for _, id := range loop.TasksInProgress(st) {
		active[id] = true
	}
	passed := map[string]bool{}
	for _, t := range p.Tasks {
		passed[t.ID] = t.Passes
	}
	for _, t := range p.Tasks {
		ts := TaskStatus{ID: t.ID, Title: t.Title, Passes: t.Passes}
		for _, d := range t.DependsOn {
			if !t.Passes && !passed[d] {
				ts.Waits = append(ts.Waits, d)
			}
		}
		if live && !t.Passes && active[t.ID] {
			ts.Active = true
		}
		out = append(out, ts)
	}
	return out
}

// Line is the one-line status of a loop, as status and list print it:
//
//	[Cycle 3] T-001..T-003 complete, T-004 in progress. Cycle gate: pending. Objective gate: pending. $1.42 spent.
//
// state is the run state (running, finished …); a stopped loop's outcome
// is added at the end.
func Line(st *loop.State, p *loop.Plan, state string) string {
	if st == nil || st.StartedAt.IsZero() {
		return "not started yet."
	}
	live := (state == StateRunning || state == StatePaused || state == StateWaiting) && st.Outcome == ""
	var b strings.Builder
	switch st.Shape {
	case "ralph":
		fmt.Fprintf(&b, "[Attempt %d] ", st.Iterations)
		fmt.Fprintf(&b, "Verify: %s.", gateWord(st.CycleGate))
	case "review":
		fmt.Fprintf(&b, "[Review] phase %s.", orDash(st.Phase))
	default:
		fmt.Fprintf(&b, "[Cycle %d] %s. Cycle gate: %s. Objective gate: %s.", st.Cycle, tasksPhrase(st, p, live), gateWord(st.CycleGate), gateWord(st.ObjectiveGate))
	}
	fmt.Fprintf(&b, " $%.2f spent.", st.CostUSD)
	if nv := NotVerifiedPhrase(st); nv != "" {
		b.WriteString(" " + nv + ".")
	}
	switch {
	case state == StateCrashed:
		b.WriteString(" CRASHED: the run died without a final record; `looprinter start` resumes it.")
	case st.Outcome == loop.ReasonInterrupted:
		fmt.Fprintf(&b, " Stopped: %s (exit %d); `looprinter start` resumes it.", loop.Title(st.Outcome), st.ExitCode)
	case st.Outcome != "":
		fmt.Fprintf(&b, " Stopped: %s (exit %d).", loop.Title(st.Outcome), st.ExitCode)
		if st.Landing != "" {
			b.WriteString(" " + strings.ToUpper(st.Landing[:1]) + st.Landing[1:] + ".")
		}
	case state == StatePaused:
		b.WriteString(" Paused.")
	case state == StateWaiting && st.Question != nil:
		fmt.Fprintf(&b, " Waiting for the answer to %s.", st.Question.ID)
	case state == StateWaiting && st.PlanWait != nil:
		fmt.Fprintf(&b, " Waiting for plan approval (looprinter approve) until %s.", st.PlanWait.Deadline.Local().Format("15:04"))
	}
	return b.String()
}

// NotVerifiedPhrase names, in a few words, the NOT VERIFIED notes of a
// loop (`sandbox: off`, a check that cannot fail …), as the one-line views
// (status over every loop, list, the dashboard's rows) show them:
//
//	NOT VERIFIED: sandbox: off; the check `true` cannot fail
//
// It is empty when the loop has no such note.
func NotVerifiedPhrase(st *loop.State) string {
	if st == nil || len(st.NotVerified) == 0 {
		return ""
	}
	heads := make([]string, 0, len(st.NotVerified))
	for _, n := range st.NotVerified {
		heads = append(heads, noteHead(n))
	}
	return "NOT VERIFIED: " + strings.Join(heads, "; ")
}

// noteHead is the head of a NOT VERIFIED note, before its explanation:
// "sandbox: off — agent runs were not confined, …" → "sandbox: off".
func noteHead(n string) string {
	for _, sep := range []string{" — ", "; ", " ("} {
		if i := strings.Index(n, sep); i > 0 {
			n = n[:i]
		}
	}
	return n
}

func gateWord(g string) string {
	switch g {
	case "":
		return "pending"
	case "not_verified":
		return "NOT VERIFIED"
	}
	return g
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tasksPhrase says which tasks are complete and which are in progress:
// "T-001..T-003 complete, T-004 in progress", or, while a wave's runs
// work on several at once, "T-004, T-005 in progress, 2 more open".
func tasksPhrase(st *loop.State, p *loop.Plan, live bool) string {
	if p == nil || len(p.Tasks) == 0 {
		if st.Phase == loop.PhasePlan || st.Phase == "" || st.Phase == loop.PhaseSetup || st.Phase == loop.PhaseBaseline {
			if live {
				return "Planning"
			}
			return "No plan yet"
		}
		return "No plan"
	}
	var done, open []string
	for _, t := range p.Tasks {
		if t.Passes {
			done = append(done, t.ID)
		} else {
			open = append(open, t.ID)
		}
	}
	var parts []string
	if len(done) > 0 {
		parts = append(parts, Ranges(done)+" complete")
	}
	if len(open) > 0 {
		now := []string{open[0]}
		word := " next"
		if live && st.Phase == loop.PhaseBuild {
			word = " in progress"
			if busy := inProgress(st, open); len(busy) > 0 {
				now = busy
			}
		}
		parts = append(parts, strings.Join(now, ", ")+word)
		if len(open) > len(now) {
			parts = append(parts, fmt.Sprintf("%d more open", len(open)-len(now)))
		}
	}
	if len(open) == 0 && live {
		switch st.Phase {
		case loop.PhaseCycleGate:
			parts = append(parts, "cycle gate running")
		case loop.PhaseObjective:
			parts = append(parts, "objective gate running")
		case loop.PhasePost:
			parts = append(parts, "post phases")
		}
	}
	return strings.Join(parts, ", ")
}

// inProgress are the open tasks (in plan order) the build runs under way
// work on.
func inProgress(st *loop.State, open []string) []string {
	busy := map[string]bool{}
	for _, id := range loop.TasksInProgress(st) {
		busy[id] = true
	}
	var out []string
	for _, id := range open {
		if busy[id] {
			out = append(out, id)
		}
	}
	return out
}

var idNum = regexp.MustCompile(`^(.*?)(\d+)$`)

// Ranges folds consecutive task ids: T-001 T-002 T-003 T-005 → "T-001..T-003, T-005".
func Ranges(ids []string) string {
	var out []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && consecutive(ids[j], ids[j+1]) {
			j++
		}
		if j == i {
			out = append(out, ids[i])
		} else {
			out = append(out, ids[i]+".."+ids[j])
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}

func consecutive(a, b string) bool {
	ma, mb := idNum.FindStringSubmatch(a), idNum.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] != mb[1] {
		return false
	}
	x, _ := strconv.Atoi(ma[2])
	y, _ := strconv.Atoi(mb[2])
	return y == x+1
}

// LineFor reads a loop directory and returns its status line.
func LineFor(dir string) string {
	return Inspect(Entry{RunDir: dir, Dir: dir}).Line
}

// eventWords names the record events that have no sentence of their own in
// record.Describe, for people.
var eventWords = map[string]string{
	record.PostPhaseEnd:  "post phase",
	record.SpecChanged:   "loop file changed",
	record.BudgetWarning: "budget warning",
	record.ScheduleFire:  "schedule",
	record.Notify:        "notification",
}

// Describe says what a record event means, in words, safe to print on a
// terminal: the stop's reason as the final report names it (TIME OR COST
// BUDGET, not time_or_cost), no raw event names, and the text agents and
// checks wrote passed through termtext.Clean.
func Describe(e record.Event) string {
	return termtext.Clean(describe(e))
}

// Summarize is Describe with the time and the cycle/iteration in front, as
// `logs`, `status` and the run's console print it.
func Summarize(e record.Event) string {
	prefix := strings.TrimSuffix(record.Summarize(e), record.Describe(e))
	return termtext.Clean(prefix + describe(e))
}

func describe(e record.Event) string {
	if e.Event == record.LoopStop {
		code := 0
		if e.ExitCode != nil {
			code = *e.ExitCode
		}
		return strings.TrimSpace(fmt.Sprintf("loop stopped: %s (exit %d) %s", loop.Title(e.Reason), code, e.Summary))
	}
	d := record.Describe(e)
	if rest, ok := strings.CutPrefix(d, e.Event); ok && (rest == "" || strings.HasPrefix(rest, ": ")) {
		// record.Describe has no sentence for it: the event name in words.
		w, ok := eventWords[e.Event]
		if !ok {
			w = strings.ReplaceAll(e.Event, "_", " ")
		}
		return w + rest
	}
	if e.Event == record.Verify || e.Event == record.Baseline {
		// A check that failed on a path outside its view: the path and the
		// field of loop.yaml that lets it in.
		text := e.FailureSignal
		for _, c := range e.Checks {
			if !strings.Contains(text, c.Signal) {
				text += "\n" + c.Signal
			}
		}
		if hints := sandbox.ViewHintLines(text); len(hints) > 0 {
			d += " — " + strings.Join(hints, "; ")
		}
	}
	return d
}
