// Package initwiz is `looprinter init`: the interview's answers, the checks
// that warn about a weak verifier, the commented loop file written from the
// answers, the .gitignore lines, and the interactive form.
package initwiz

import (
	"fmt"
	"github.com/looprinter/looprinter/agent"
	"regexp"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/spec"
)

// Answers are everything the interview asks, in its stages: the objective,
// the deliverables, the verification, the constraints, then the agent, the
// budgets and the stop conditions.
type Answers struct {
	// 1. Objective
	Shape     string
	Objective string
	// 2. Deliverables: what each cycle must produce.
	Deliverables []string
	// 3. Verification, outside the agent.
	Setup           []string
	Verify          []string
	ObjectiveVerify []string
	// HoldoutShare is the share of the project's test files to set aside
	// as holdout tests ("20%" or a count; empty: none); Holdout and
	// HoldoutVerify are the files picked and the commands that run them
	// (PlanHoldout). TestFiles are the test files found, which the
	// interview's holdout question offers.
	HoldoutShare  string
	Holdout       []string
	HoldoutVerify []string
	HoldoutNotes  []string // what the user must know of the pick (PlanHoldout)
	// FailingOutput is what the checks printed when init ran them once
	// and they failed: a test file it names holds the loop's failing
	// target, and is never set aside (PlanHoldout).
	FailingOutput string
	TestFiles     []string
	// 4. Constraints
	Protect     []string
	Constraints []string
	// Sandbox is how agent runs are confined (spec's sandbox: auto, bwrap,
	// landlock, seatbelt, off); Audit turns on the audit before DONE.
	Sandbox string
	Audit   bool
	// Agent
	Backend string
	Model   string
	Command string
	// Budgets and stop conditions
	Iterations  int
	Cycles      int
	CostUSD     float64
	Wall        string
	SameFailure int

	// Notes say what init chose or changed on the user's behalf (a test
	// command it detected, a flag it added so that the counts can be
	// read); the summary shows them.
	Notes []string
	// Example is the test command of the project's ecosystem, for the
	// messages that ask for a check ("go test ./..." when none is known).
	Example string
	// Detected is the test command DetectChecks found, if any.
	Detected *detect.Test
}

// Defaults are the answers nobody gave.
func Defaults() Answers {
	return Answers{
		Shape:       spec.ShapeCycle,
		Backend:     "claude",
		Sandbox:     "auto",
		Iterations:  spec.DefaultIterations,
		Cycles:      spec.DefaultCycles,
		CostUSD:     spec.DefaultCostUSD,
		Wall:        "4h",
		SameFailure: spec.DefaultSameFailure,
	}
}

// SandboxModes are the values of the loop file's sandbox:, the default
// first.
var SandboxModes = []string{"auto", "bwrap", "landlock", "seatbelt", "off"}

// Clean trims every answer and drops empty list entries.
func (a *Answers) Clean() {
	a.Shape = strings.ToLower(strings.TrimSpace(a.Shape))
	a.Objective = strings.Join(strings.Fields(a.Objective), " ")
	a.Backend = strings.ToLower(strings.TrimSpace(a.Backend))
	a.Model = strings.TrimSpace(a.Model)
	a.Command = strings.TrimSpace(a.Command)
	a.Wall = strings.TrimSpace(a.Wall)
	a.HoldoutShare = strings.TrimSpace(a.HoldoutShare)
	a.Sandbox = strings.ToLower(strings.TrimSpace(a.Sandbox))
	if a.Sandbox == "" {
		a.Sandbox = "auto"
	}
	for _, l := range []*[]string{&a.Deliverables, &a.Setup, &a.Verify, &a.ObjectiveVerify, &a.Protect, &a.Constraints} {
		*l = cleanList(*l)
	}
	// The passing-count rule reads per-test lines: a plain `go test`
	// prints none, so it is written with -v, and the summary says so.
	for _, l := range []*[]string{&a.Verify, &a.ObjectiveVerify} {
		for i, c := range *l {
			if counted := spec.CountedTestCommand(c); counted != c {
				a.note(fmt.Sprintf("`%s` is written as `%s`: %s (pass the command with -json, or edit the loop file, to choose otherwise)", c, counted, spec.UncountedTests(c)))
				(*l)[i] = counted
			}
		}
	}
}

// note adds a note once.
func (a *Answers) note(s string) {
	for _, n := range a.Notes {
		if n == s {
			return
		}
	}
	a.Notes = append(a.Notes, s)
}

// example is a test command for the messages that ask for a check.
func (a Answers) example() string {
	if a.Example != "" {
		return a.Example
	}
	return "go test ./..."
}

// DetectChecks proposes the project's test command when no check was
// given: the first one detect.Find reads from the folder goes under verify
// (and objective_verify, for the cycle shape), with a note that says where
// it came from. It also sets Example. It returns whether it proposed one.
func (a *Answers) DetectChecks(dir string, probe detect.Probe) bool {
	ts := detect.Find(dir, probe)
	if len(ts) > 0 {
		a.Example = ts[0].Command
	}
	if len(a.Verify) > 0 || len(a.ObjectiveVerify) > 0 || len(ts) == 0 {
		return false
	}
	t := ts[0]
	a.Detected = &t
	where := "verify"
	a.Verify = []string{t.Command}
	if a.Shape == spec.ShapeCycle {
		a.ObjectiveVerify = []string{t.Command}
		where = "verify and objective_verify"
	}
	n := fmt.Sprintf("detected the test command `%s` from %s, written under %s; pass --verify or --objective-verify to choose others", t.Command, t.From, where)
	if len(ts) > 1 {
		var others []string
		for _, o := range ts[1:] {
			others = append(others, fmt.Sprintf("`%s` (%s)", o.Command, o.From))
		}
		n += "; also found " + strings.Join(others, ", ")
	}
	a.note(n)
	a.Clean()
	return true
}

func cleanList(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		s = strings.TrimPrefix(s, "- ")
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// Lines splits a multi-line answer into its entries.
func Lines(s string) []string { return cleanList(strings.Split(s, "\n")) }

// Missing is an answer the loop cannot do without.
type Missing struct {
	Flag string // the flag that gives it
	What string
	// Invalid: a value was given but is wrong (a misspelt backend), as
	// against an answer that is missing.
	Invalid bool
}

// ModelApplies says whether agent.model means anything for a backend: not
// for a command agent, which gets no model from looprinter.
func ModelApplies(backend string) bool { return backend != "command" }

// ModelExamples are model names of the backend's families (agent's
// registry), the ones to suggest: none for a backend without families.
func ModelExamples(backend string) []string {
	b, ok := agent.Find(backend)
	if !ok {
		return nil
	}
	var out []string
	for i := len(b.Families) - 1; i >= 0; i-- {
		out = append(out, b.Families[i].Model)
	}
	return out
}

// ModelHint is the model question's description for the backend: its own
// models as examples, never another CLI's.
func ModelHint(backend string) string {
	if ex := ModelExamples(backend); len(ex) > 0 {
		return fmt.Sprintf("The %s CLI's model name, e.g. %s. Empty: the CLI's default.", backend, strings.Join(ex, " or "))
	}
	return fmt.Sprintf("The %s CLI's model name. Empty: the CLI's default.", backend)
}

func (m Missing) Error() string { return fmt.Sprintf("%s: pass %s", m.What, m.Flag) }

// Check returns the answers that are missing or wrong, each naming the flag
// that sets it.
func (a Answers) Check() []Missing {
	var ms []Missing
	switch a.Shape {
	case spec.ShapeCycle, spec.ShapeRalph, spec.ShapeReview:
	default:
		ms = append(ms, Missing{"--shape cycle|ralph|review", fmt.Sprintf("%q is not a loop shape", a.Shape), true})
	}
	if a.Objective == "" && a.Shape != spec.ShapeReview {
		ms = append(ms, Missing{`--objective "one sentence a machine can judge"`, "the key objective is missing", false})
	}
	if a.Shape == spec.ShapeRalph && len(a.Verify) == 0 {
		ms = append(ms, Missing{fmt.Sprintf("--verify %q", a.example()), "the ralph shape stops only when its verify checks pass, and none is given", false})
	}
	if !contains(spec.Backends, a.Backend) {
		ms = append(ms, Missing{"--backend " + strings.Join(spec.Backends, "|"), fmt.Sprintf("--backend %q is not a backend", a.Backend), true})
	}
	if a.Backend == "command" && a.Command == "" {
		ms = append(ms, Missing{`--command "./my-agent.sh"`, "the command backend needs the program to run", false})
	}
	if a.Sandbox != "" && !contains(SandboxModes, a.Sandbox) { // "": auto
		ms = append(ms, Missing{"--sandbox " + strings.Join(SandboxModes, "|"), fmt.Sprintf("--sandbox %q is not a sandbox mode", a.Sandbox), true})
	}
	if a.Iterations < 1 {
		ms = append(ms, Missing{"--iterations N (1 or more)", "the iteration budget must be at least 1; a loop never runs unlimited", true})
	}
	if a.Cycles < 1 {
		ms = append(ms, Missing{"--cycles N (1 or more)", "the cycle budget must be at least 1", true})
	}
	if !(a.CostUSD > 0) || !spec.ValidMoney(a.CostUSD) {
		ms = append(ms, Missing{"--cost USD (more than 0)", "the cost budget must be more than 0", true})
	}
	if d, err := spec.ParseDuration(a.Wall); err != nil || d <= 0 {
		ms = append(ms, Missing{"--wall DURATION (like 90m or 4h)", fmt.Sprintf("%q is not a time budget", a.Wall), true})
	}
	if a.SameFailure < 2 {
		ms = append(ms, Missing{"--same-failure N (2 or more)", "the no-progress stop needs 2 or more repeats", true})
	}
	return ms
}

var (
	// existence-only checks: they pass as soon as a file is there.
	existenceRe = regexp.MustCompile(`^(!\s*)?(test\s+-[efsdrx]\b|\[\[?\s+-[efsdrx]\b|ls(\s|$)|stat\s|find\s)`)
	splitRe     = regexp.MustCompile(`&&|\|\||;`)
	vagueRe     = regexp.MustCompile(`(?i)\b(good|better|best|nice|nicer|clean|cleaner|robust|properly|proper|well|improved?|improves|elegant|beautiful|readable|maintainable|quality|polished|solid|correctly|reasonable|appropriate|optimi[sz]ed?|efficient|fast|faster|simple|simpler|user-friendly|modern)\b`)
	measureRe   = regexp.MustCompile(`(?i)(\d|%|\b(pass|passes|passing|fail|fails|failing|exit|exits|returns?|prints?|outputs?|compiles?|builds?|tests?|lint|vet|errors?|warnings?|zero|at least|at most|under|below|above|within|equals?|matches|contains?|responds?|status)\b)`)
)

// IsExistenceCheck reports whether a check only tests that files exist.
func IsExistenceCheck(cmd string) bool {
	parts := splitRe.Split(cmd, -1)
	n := 0
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n++
		if !existenceRe.MatchString(p) {
			return false
		}
	}
	return n > 0
}

// VagueWords returns the words of an objective that a machine cannot judge,
// when the objective has no measurable term to judge it by; nil otherwise.
func VagueWords(objective string) []string {
	if measureRe.MatchString(objective) {
		return nil
	}
	return vagueRe.FindAllString(objective, -1)
}

// Weaknesses are the warnings about the loop's verification.
func (a Answers) Weaknesses() []string {
	var w []string
	checks := append(append([]string{}, a.Verify...), a.ObjectiveVerify...)
	switch {
	case len(checks) == 0:
		w = append(w, fmt.Sprintf("no checks: nothing outside the agent judges its work, so the loop stops on its budgets, not on evidence. Add one: --verify %q (a test, a build, a linter) and --objective-verify ./scripts/objective.sh", a.example()))
	default:
		all := true
		for _, c := range checks {
			if !IsExistenceCheck(c) {
				all = false
				break
			}
		}
		if all {
			w = append(w, fmt.Sprintf("only file-existence checks (%s): they pass as soon as a file exists, whatever it holds. Add a check that runs or inspects the work: its tests, a build, a linter, a script that checks the content", strings.Join(checks, "; ")))
		}
	}
	if a.Shape == spec.ShapeCycle && len(a.ObjectiveVerify) == 0 && len(checks) > 0 {
		w = append(w, "no objective check: the objective gate passes with a warning and the final report lists the objective as NOT VERIFIED. Add --objective-verify with a command that exits 0 only when the objective is met")
	}
	if a.Objective != "" {
		if words := VagueWords(a.Objective); len(words) > 0 {
			w = append(w, fmt.Sprintf("the objective %q is not something a machine can judge: %s, and no measurable term (a number, a test that passes, an exit code). Rewrite it as one sentence a check can decide, e.g. \"%s passes and the README documents every flag\"", a.Objective, quoteAll(words), a.example()))
		} else if !measureRe.MatchString(a.Objective) && len(a.ObjectiveVerify) == 0 {
			w = append(w, fmt.Sprintf("the objective %q names nothing measurable and no objective check judges it: say how a machine can tell it is met", a.Objective))
		}
	}
	return w
}

func quoteAll(words []string) string {
	seen := map[string]bool{}
	var q []string
	for _, w := range words {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		q = append(q, strconv.Quote(w))
	}
	if len(q) == 1 {
		return "the word " + q[0] + " is vague"
	}
	return "the words " + strings.Join(q, ", ") + " are vague"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Summary is what the user confirms before anything is written.
func (a Answers) Summary(path string) string {
	var b strings.Builder
	list := func(title string, items []string, none string) {
		fmt.Fprintf(&b, "%s:\n", title)
		if len(items) == 0 {
			fmt.Fprintf(&b, "  (%s)\n", none)
		}
		for _, it := range items {
			fmt.Fprintf(&b, "  - %s\n", it)
		}
	}
	fmt.Fprintf(&b, "File: %s\n", path)
	fmt.Fprintf(&b, "Shape: %s\n", a.Shape)
	fmt.Fprintf(&b, "Objective: %s\n", orNone(a.Objective))
	list("Deliverables", a.Deliverables, "none")
	list("Setup (once)", a.Setup, "none")
	list("Cycle gate (verify)", a.Verify, "none")
	list("Objective gate (objective_verify)", a.ObjectiveVerify, "none: the objective will be NOT VERIFIED")
	if len(a.Holdout) > 0 {
		list("Holdout tests (set aside: the agent never sees them)", a.Holdout, "none")
		list("Holdout checks (holdout_verify, in the clean room)", a.HoldoutVerify, "none")
		if len(a.HoldoutNotes) > 0 {
			list("Holdout notes", a.HoldoutNotes, "none")
		}
	}
	list("Protected files", a.Protect, "the engine's defaults")
	list("Constraints", a.Constraints, "none")
	agent := a.Backend
	if a.Model != "" {
		agent += ", model " + a.Model
	}
	if a.Command != "" {
		agent += ", command " + a.Command
	}
	fmt.Fprintf(&b, "Agent: %s\n", agent)
	fmt.Fprintf(&b, "Sandbox: %s\n", a.Sandbox)
	if a.Shape != spec.ShapeReview {
		audit := "off"
		if a.Audit {
			audit = "on: a fresh auditor looks for test gaming before DONE"
		}
		fmt.Fprintf(&b, "Audit: %s\n", audit)
	}
	fmt.Fprintf(&b, "Budgets: %d iterations, %d cycles, $%g, %s wall time; stop after the same failure %d times\n",
		a.Iterations, a.Cycles, a.CostUSD, a.Wall, a.SameFailure)
	if len(a.Notes) > 0 {
		list("Notes", a.Notes, "none")
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
