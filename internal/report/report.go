// Package report is the morning digest: one page over every loop on this
// machine that ran in a period — how each ended and with which exit code,
// both gates, tasks passed, its branch and diffstat, spend, rollbacks,
// landings — with what needs a human first. `looprinter report` prints it;
// notify.digest sends it once a day through the loop file's notify
// channels.
//
// Every figure comes from what `status` reads (ops.Inspect over the
// registry) and from the engine's own records and ledger, so the page and
// `status` always agree.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/internal/gitops"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/rollback"
	"github.com/looprinter/looprinter/spec"
)

// Loop is one loop's line of the report.
type Loop struct {
	Name          string   `json:"name"`
	Key           string   `json:"key"`
	State         string   `json:"state"`             // as status says it: running, finished, crashed, …
	Outcome       string   `json:"outcome,omitempty"` // done, blocked, …
	Title         string   `json:"title"`             // DONE, BLOCKED, … or the state
	ExitCode      *int     `json:"exit_code,omitempty"`
	Summary       string   `json:"summary,omitempty"`
	CycleGate     string   `json:"cycle_gate,omitempty"`
	ObjectiveGate string   `json:"objective_gate,omitempty"`
	TasksPassed   int      `json:"tasks_passed"`
	TasksDone     int      `json:"tasks_done"`
	TasksTotal    int      `json:"tasks_total"`
	Branch        string   `json:"branch,omitempty"`
	Diffstat      string   `json:"diffstat,omitempty"`
	CostUSD       float64  `json:"cost_usd"`
	WallMS        int64    `json:"wall_ms"`
	Rollbacks     []string `json:"rollbacks,omitempty"`
	Landings      []string `json:"landings,omitempty"`
	Failovers     int      `json:"failovers,omitempty"`
	// Parallel says what running builds at once saved.
	Parallel string `json:"parallel,omitempty"`
	// NetRefused are the hosts the loop's proxies refused (the checks'
	// marked "(checks)"), as the run's report and status list them.
	NetRefused []string `json:"net_refused,omitempty"`
	Violations []string `json:"violations,omitempty"`
	// PrivateBytes is what the agents wrote to HOME and the caches (kept
	// in the engine's private folder); PrivateWarning says it is over the
	// loop file's private_budget.
	PrivateBytes   int64  `json:"private_bytes,omitempty"`
	PrivateWarning string `json:"private_warning,omitempty"`
	// ViolationCount is how many violations the period had (Violations
	// lists the last ones).
	ViolationCount int      `json:"violation_count,omitempty"`
	NotVerified    []string `json:"not_verified,omitempty"`
	// Strength is the loop's last verify_strength pass in one line, or the
	// advice to turn it on for a loop that ended DONE without one.
	Strength string `json:"strength,omitempty"`
	// Escalations say which task needed a stronger agent, and why.
	Escalations []string `json:"escalations,omitempty"`
	// BestOf are the best-of attempts kept (attempt_judged records, kind
	// kept): which attempt of how many, on which agent, its change and
	// where the others are; none passing shows as the task's failed try.
	BestOf []string `json:"best_of,omitempty"`
	// Question is the question the loop waits on (looprinter answer), and
	// Guidance the operator's guidance no agent run has acknowledged yet.
	Question string   `json:"question,omitempty"`
	Guidance []string `json:"guidance,omitempty"`
	// NeedsHuman says why a person should look first ("" when nothing).
	NeedsHuman string    `json:"needs_human,omitempty"`
	Dir        string    `json:"dir"`
	Updated    time.Time `json:"updated"`
	urgency    int
}

// Report is the page.
type Report struct {
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until"`
	Loops      []Loop    `json:"loops"`
	CostUSD    float64   `json:"cost_usd"`
	NeedsHuman []string  `json:"needs_human,omitempty"` // "name: why", most urgent first
}

// Build reads every registered loop that ran since the given time (or is
// running now).
func Build(since, now time.Time) (*Report, error) {
	entries, err := ops.Entries()
	if err != nil {
		return nil, err
	}
	r := &Report{Since: since.UTC(), Until: now.UTC(), Loops: []Loop{}}
	for _, e := range entries {
		s := ops.Inspect(e)
		l, ok := loopOf(e, s, since)
		if !ok {
			continue
		}
		r.Loops = append(r.Loops, l)
		r.CostUSD += l.CostUSD
	}
	sort.SliceStable(r.Loops, func(i, j int) bool {
		if r.Loops[i].urgency != r.Loops[j].urgency {
			return r.Loops[i].urgency < r.Loops[j].urgency
		}
		return r.Loops[i].Name < r.Loops[j].Name
	})
	for _, l := range r.Loops {
		if l.NeedsHuman != "" {
			r.NeedsHuman = append(r.NeedsHuman, l.Name+": "+l.NeedsHuman)
		}
	}
	return r, nil
}

func loopOf(e ops.Entry, s ops.Status, since time.Time) (Loop, bool) {
	st := s.Loop
	live := s.State == ops.StateRunning || s.State == ops.StatePaused || s.State == ops.StateStarting
	if st == nil || (!live && st.UpdatedAt.Before(since)) {
		return Loop{}, false
	}
	dir := e.RunDir
	if dir == "" {
		dir = e.Dir
	}
	l := Loop{Name: e.Name, Key: e.Key, State: s.State, Outcome: s.Outcome, ExitCode: s.ExitCode, Summary: st.Summary,
		CycleGate: st.CycleGate, ObjectiveGate: st.ObjectiveGate, TasksPassed: st.TasksPassed,
		CostUSD: st.CostUSD, WallMS: st.WallMS, NotVerified: st.NotVerified, Dir: dir, Updated: st.UpdatedAt, Branch: e.Branch}
	if s.Question != nil {
		l.Question = termtext.Line(s.Question.ID + ": " + s.Question.Text)
	}
	for _, g := range s.Guidance {
		l.Guidance = append(l.Guidance, termtext.Line(g.Text))
	}
	l.Title = strings.ToUpper(s.State)
	if s.Outcome != "" {
		l.Title = loop.Title(s.Outcome)
	}
	if s.Plan != nil { // loop.CurrentPlan, as status and run show it
		l.TasksDone, l.TasksTotal = s.Plan.Done(), len(s.Plan.Tasks)
	}
	engineDir := dir
	if sp, err := spec.Load(e.LoopFile); err == nil && (e.Archived || e.Worktree != "") {
		engineDir = gitops.WorktreeRunDir(sp, filepath.Join(ops.StateDir(), "worktrees", e.Key))
	}
	if l.Branch == "" && gitops.TopLevel(dir) != "" {
		l.Branch = gitops.CurrentBranch(dir)
	}
	l.Diffstat = diffstat(e.Dir, engineDir)
	// The window is read from the loop's summary (its timeline by hour and
	// by day, and the last records of each kind the page names), brought
	// up to date with what was written since it was saved: what the page
	// costs does not grow with the history or the window.
	if sum, err := loopdir.Dir(dir).Summary(); err == nil && sum != nil {
		w := sum.Window(since)
		for _, n := range w.Notes {
			switch n.Event {
			case record.Rollback:
				l.Rollbacks = append(l.Rollbacks, termtext.Line(n.Message))
			case record.Land:
				l.Landings = append(l.Landings, termtext.Line(n.Message))
			case record.Violation:
				l.Violations = append(l.Violations, termtext.Line(n.Kind+": "+n.Message))
			case record.AttemptJudged:
				if line := bestOfLine(n.Kind, n.Message); line != "" {
					l.BestOf = append(l.BestOf, line)
				}
			}
		}
		l.Failovers = w.Counts[record.AgentFailover]
		more := func(list []string, kind string) []string {
			if k := w.Counts[kind] - len(list); k > 0 {
				about := ""
				if !w.Exact {
					about = "about "
				}
				list = append([]string{fmt.Sprintf("… and %s%d earlier ones", about, k)}, list...)
			}
			return list
		}
		l.Rollbacks = more(l.Rollbacks, record.Rollback)
		l.Landings = more(l.Landings, record.Land)
		l.ViolationCount = max(w.Counts[record.Violation], len(l.Violations))
		l.Violations = more(l.Violations, record.Violation)
	}
	if s.Private != nil {
		l.PrivateBytes, l.PrivateWarning = s.Private.Bytes, s.Private.Warning
	}
	l.Strength = strengthLine(st, s.Outcome, e.LoopFile)
	l.Parallel = loop.ParallelSaving(st)
	for _, h := range st.NetRefused {
		l.NetRefused = append(l.NetRefused, termtext.Line(h))
	}
	for _, n := range loop.EscalationLines(st) {
		l.Escalations = append(l.Escalations, termtext.Line(n))
	}
	l.urgency, l.NeedsHuman = needsHuman(l)
	return l, true
}

// diffstat is what the loop's commits changed: from the state the loop
// started at (its first checkpoint) to the engine's last commit.
func diffstat(repoDir, engineDir string) string {
	led := rollback.LoadLedger(engineDir)
	data := strings.TrimSpace(readFile(loopdir.PrivateOf(engineDir).LastCommit()))
	if len(led.Checkpoints) == 0 || data == "" || gitops.TopLevel(repoDir) == "" {
		return ""
	}
	out, err := gitops.Git(repoDir, "diff", "--shortstat", led.Checkpoints[0].Commit, data)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// needsHuman ranks a loop (lower is more urgent) and says why a person
// should look at it.
func needsHuman(l Loop) (int, string) {
	switch {
	case l.State == ops.StateCrashed:
		return 0, "the run crashed: `looprinter run` resumes it"
	case l.Question != "":
		return 1, "waits for an answer (looprinter answer): " + l.Question
	case l.Outcome == loop.ReasonBlocked:
		return 1, "BLOCKED: " + firstLine(l.Summary)
	case l.Outcome == loop.ReasonNoProgress:
		return 2, "NO PROGRESS: the same failure kept coming back; the diagnosis needs a person"
	case l.ViolationCount > 0:
		return 3, fmt.Sprintf("%d violations by agents: read them before trusting the result", l.ViolationCount)
	case l.Outcome == loop.ReasonNotVerified:
		return 3, "NOT VERIFIED: the checks never failed, so they show nothing"
	case l.Outcome == loop.ReasonBudget || l.Outcome == loop.ReasonTimeCost:
		return 4, loop.Title(l.Outcome) + ": raise the budget or sharpen the prompts"
	case l.Outcome == loop.ReasonAlreadyPassing:
		return 4, "ALREADY PASSING: sharpen the checks"
	case l.PrivateWarning != "":
		return 5, l.PrivateWarning
	case l.State == ops.StateRunning || l.State == ops.StatePaused || l.State == ops.StateStarting:
		return 5, ""
	}
	return 6, ""
}

// Text is the page for a terminal.
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "looprinter report: %s to %s, %d loops, $%.2f spent\n", r.Since.Local().Format("2006-01-02 15:04"), r.Until.Local().Format("2006-01-02 15:04"), len(r.Loops), r.CostUSD)
	if len(r.NeedsHuman) > 0 {
		b.WriteString("\nneeds a human first:\n")
		for _, n := range r.NeedsHuman {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	for _, l := range r.Loops {
		fmt.Fprintf(&b, "\n%s  %s%s\n", l.Name, l.Title, exit(l.ExitCode))
		for _, kv := range l.fields() {
			fmt.Fprintf(&b, "  %-11s %s\n", kv[0]+":", kv[1])
		}
	}
	if len(r.Loops) == 0 {
		b.WriteString("\nno loop ran in this period\n")
	}
	return termtext.Clean(b.String())
}

// Markdown is the page for a chat or a pull request.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# looprinter report\n\n%s to %s: %d loops, $%.2f spent.\n", r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339), len(r.Loops), r.CostUSD)
	if len(r.NeedsHuman) > 0 {
		b.WriteString("\n## Needs a human first\n\n")
		for _, n := range r.NeedsHuman {
			fmt.Fprintf(&b, "- %s\n", md(n))
		}
	}
	for _, l := range r.Loops {
		fmt.Fprintf(&b, "\n## %s — %s%s\n\n", md(l.Name), l.Title, exit(l.ExitCode))
		for _, kv := range l.fields() {
			fmt.Fprintf(&b, "- **%s:** %s\n", kv[0], md(kv[1]))
		}
	}
	return termtext.Clean(b.String())
}

func (l Loop) fields() [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, v})
		}
	}
	add("why", firstLine(l.Summary))
	if l.CycleGate != "" || l.ObjectiveGate != "" {
		add("gates", fmt.Sprintf("cycle gate %s, objective gate %s", l.CycleGate, l.ObjectiveGate))
	}
	add("tasks", fmt.Sprintf("%d of %d in the current plan, %d passed in all", l.TasksDone, l.TasksTotal, l.TasksPassed))
	branch := l.Branch
	if branch != "" && l.Diffstat != "" {
		branch += " (" + l.Diffstat + ")"
	}
	add("branch", branch)
	add("spent", fmt.Sprintf("$%.2f, %s", l.CostUSD, (time.Duration(l.WallMS)*time.Millisecond).Round(time.Second)))
	add("question", l.Question)
	for _, x := range l.Guidance {
		add("guidance", x+" (not acknowledged yet)")
	}
	for _, x := range l.Rollbacks {
		add("rollback", x)
	}
	for _, x := range l.Landings {
		add("land", x)
	}
	add("parallel", l.Parallel)
	if len(l.NetRefused) > 0 {
		add("network", "refused "+strings.Join(l.NetRefused, ", ")+" (add what is needed to network.allow)")
	}
	if l.Failovers > 0 {
		add("failovers", fmt.Sprintf("%d (usage limits)", l.Failovers))
	}
	for _, x := range l.Violations {
		add("violation", x)
	}
	for _, x := range l.NotVerified {
		add("not verif.", x)
	}
	add("strength", l.Strength)
	for _, x := range l.Escalations {
		add("escalated", x)
	}
	for _, x := range l.BestOf {
		add("best of", x)
	}
	add("private", l.PrivateWarning)
	add("dir", l.Dir)
	return out
}

func exit(c *int) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" (exit %d)", *c)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// md keeps text from an agent or a check from forming markup in the page.
func md(s string) string {
	r := strings.NewReplacer("\n", " ", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

func readFile(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(data)
}

// bestOfLine is the report's line for an attempt_judged record: the kept
// attempts only (the others are on their refs and in the records).
func bestOfLine(kind, message string) string {
	if kind != "kept" {
		return ""
	}
	return termtext.Line(message)
}

// strengthLine is a loop's last verify_strength pass, or, for a DONE loop
// whose loop file has it off, the advice to turn it on.
func strengthLine(st *loop.State, outcome, loopFile string) string {
	if st.Strength != nil {
		line := record.StrengthLine(st.Strength)
		if n := len(st.Strength.Survivors); n > 0 {
			line += "; first survivor " + st.Strength.Survivors[0].String()
		}
		return termtext.Line(line)
	}
	if outcome != loop.ReasonDone {
		return ""
	}
	if sp, err := spec.Load(loopFile); err == nil && !sp.VerifyStrength.On {
		return "not measured: set `verify_strength: on` in the loop file to learn how many mutants of the changed lines the checks catch (with {min: 0.6}, a weaker result is NOT VERIFIED)"
	}
	return ""
}
