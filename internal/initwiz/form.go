package initwiz

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/huh"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/spec"
)

// ErrAborted is the user leaving the interview (ctrl+c).
var ErrAborted = errors.New("init aborted; nothing was written")

const listHint = "One per line (alt+enter or ctrl+j starts a new line; enter goes on)."

// formValues holds the answers as the form edits them: lists as text, one
// entry a line, numbers as text.
type formValues struct {
	shape, objective                         string
	deliverables, setup, verify, objVerify   string
	protect, constraints                     string
	backend, model, command                  string
	sandbox                                  string
	audit                                    bool
	iterations, cycles, cost, wall, sameFail string
	holdout                                  string
}

func toForm(a Answers) *formValues {
	return &formValues{
		shape: a.Shape, objective: a.Objective,
		deliverables: strings.Join(a.Deliverables, "\n"), setup: strings.Join(a.Setup, "\n"),
		verify: strings.Join(a.Verify, "\n"), objVerify: strings.Join(a.ObjectiveVerify, "\n"),
		protect: strings.Join(a.Protect, "\n"), constraints: strings.Join(a.Constraints, "\n"),
		backend: a.Backend, model: a.Model, command: a.Command,
		sandbox: a.Sandbox, audit: a.Audit,
		iterations: strconv.Itoa(a.Iterations), cycles: strconv.Itoa(a.Cycles),
		cost: strconv.FormatFloat(a.CostUSD, 'f', -1, 64), wall: a.Wall, sameFail: strconv.Itoa(a.SameFailure),
		holdout: a.HoldoutShare,
	}
}

func (v *formValues) answers() Answers {
	a := Answers{
		Shape: v.shape, Objective: v.objective,
		Deliverables: Lines(v.deliverables), Setup: Lines(v.setup),
		Verify: Lines(v.verify), ObjectiveVerify: Lines(v.objVerify),
		Protect: Lines(v.protect), Constraints: Lines(v.constraints),
		Backend: v.backend, Model: v.model, Command: v.command, Wall: v.wall,
		HoldoutShare: v.holdout, Sandbox: v.sandbox, Audit: v.audit,
	}
	a.Iterations, _ = strconv.Atoi(strings.TrimSpace(v.iterations))
	a.Cycles, _ = strconv.Atoi(strings.TrimSpace(v.cycles))
	a.CostUSD, _ = strconv.ParseFloat(strings.TrimSpace(v.cost), 64)
	a.SameFailure, _ = strconv.Atoi(strings.TrimSpace(v.sameFail))
	if !ModelApplies(v.backend) {
		a.Model = "" // not asked for a command agent: drop one typed before the backend changed
	}
	if v.backend != "command" {
		a.Command = ""
	}
	a.Clean()
	return a
}

func atLeast(min int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < min {
			return fmt.Errorf("a whole number, %d or more", min)
		}
		return nil
	}
}

// Interview asks the questions in a terminal, starting from the given
// answers (the flags), and returns the answers once the user has seen the
// summary and confirmed it. confirmed is false when the user said no.
func Interview(start Answers, path string, in io.Reader, out io.Writer) (a Answers, confirmed bool, err error) {
	v := toForm(start)
	shapeOpts := []huh.Option[string]{
		huh.NewOption("cycle: plan, build one task per run, cycle gate, objective gate", spec.ShapeCycle),
		huh.NewOption("ralph: the same prompt until the verify checks pass", spec.ShapeRalph),
		huh.NewOption("review: writer, reviewer, fixer in rounds", spec.ShapeReview),
	}
	var sandboxOpts []huh.Option[string]
	for _, m := range SandboxModes {
		sandboxOpts = append(sandboxOpts, huh.NewOption(m, m))
	}
	var backendOpts []huh.Option[string]
	for _, b := range spec.Backends {
		label := b
		if d, ok := agent.Find(b); ok {
			label = d.Label // each backend names its choice where it is declared
		}
		backendOpts = append(backendOpts, huh.NewOption(label, b))
	}
	form := huh.NewForm(
		huh.NewGroup(
			huh.NewNote().Title("looprinter init: 1/6 Objective").
				Description("A loop cannot be better than its verifier. Start with what \"done\" means."),
			huh.NewInput().Title("Key objective").
				Description("One sentence a machine can judge, e.g. \"go test ./... passes and `tool --json` prints valid JSON\". It goes into every prompt.").
				Value(&v.objective).
				Validate(func(s string) error {
					if strings.TrimSpace(s) == "" && v.shape != spec.ShapeReview {
						return errors.New("the loop needs an objective")
					}
					return nil
				}),
			huh.NewSelect[string]().Title("Loop shape").Options(shapeOpts...).Value(&v.shape),
		),
		huh.NewGroup(
			huh.NewText().Title("2/6 Deliverables: what must each cycle produce?").
				Description("Files, features, fixes; the plan is built from them. "+listHint).
				Lines(5).Value(&v.deliverables),
		),
		huh.NewGroup(
			huh.NewText().Title("3/6 Verification: cycle gate (verify)").
				Description("Commands run outside the agent after each cycle; all must exit 0. Tests, build, lint. "+listHint).
				Lines(4).Value(&v.verify).
				Validate(func(s string) error {
					if v.shape == spec.ShapeRalph && len(Lines(s)) == 0 {
						return errors.New("the ralph shape needs at least one check")
					}
					return nil
				}),
			huh.NewText().Title("Objective gate (objective_verify)").
				Description("Commands that exit 0 only when the key objective is truly met. Empty: the objective is reported NOT VERIFIED. "+listHint).
				Lines(3).Value(&v.objVerify),
			huh.NewText().Title("Setup, run once before the first cycle").
				Description("e.g. go mod download. "+listHint).
				Lines(2).Value(&v.setup),
		),
		huh.NewGroup(
			huh.NewInput().Title("Holdout tests").
				Description(fmt.Sprintf("The project has %d test files. Set a share of them aside as holdout tests: the agent never sees them, "+
					"and only the clean room that decides DONE runs them (when git tracks them, the agent sees no repository while the loop runs). Like 20%% or 2; empty: none.", len(start.TestFiles))).
				Value(&v.holdout).
				Validate(func(s string) error {
					_, err := HoldoutCount(s, len(start.TestFiles))
					return err
				}),
		).WithHideFunc(func() bool { return len(start.TestFiles) < 2 }),
		huh.NewGroup(
			huh.NewText().Title("4/6 Constraints: files the agent must not change").
				Description("Globs, e.g. **/*_test.go. "+listHint).
				Lines(3).Value(&v.protect),
			huh.NewText().Title("Other constraints for the agent").
				Description("Rules the prompts carry, e.g. \"no new dependencies\". "+listHint).
				Lines(3).Value(&v.constraints),
		),
		huh.NewGroup(
			huh.NewSelect[string]().Title("Sandbox: how agent runs are confined").
				Description("auto (the default): bubblewrap, else Landlock (Seatbelt on macOS); off runs agents with all you can reach.").
				Options(sandboxOpts...).Value(&v.sandbox),
			huh.NewConfirm().Title("Audit before DONE?").
				Description("A fresh auditor, by default another model than the builder's, reads the change for test gaming before DONE: one more agent run per DONE gate. Default: no.").
				Affirmative("Yes").Negative("No").Value(&v.audit),
		),
		huh.NewGroup(
			huh.NewSelect[string]().Title("5/6 Agent: backend").Options(backendOpts...).Value(&v.backend),
		),
		huh.NewGroup(
			huh.NewInput().Title("Model").DescriptionFunc(func() string { return ModelHint(v.backend) }, &v.backend).Value(&v.model),
		).WithHideFunc(func() bool { return !ModelApplies(v.backend) }),
		huh.NewGroup(
			huh.NewInput().Title("Agent command").
				Description("The program and its arguments; it gets the prompt on stdin, e.g. ./my-agent.sh").
				Value(&v.command).
				Validate(func(s string) error {
					if v.backend == "command" && strings.TrimSpace(s) == "" {
						return errors.New("the command backend needs a program")
					}
					return nil
				}),
		).WithHideFunc(func() bool { return v.backend != "command" }),
		huh.NewGroup(
			huh.NewNote().Title("6/6 Budgets and stop conditions").
				Description("Any single stop condition leaks: set all three layers."),
			huh.NewInput().Title("Iterations (agent runs in build; ralph: attempts)").Value(&v.iterations).Validate(atLeast(1)),
			huh.NewInput().Title("Cycles").Value(&v.cycles).Validate(atLeast(1)),
			huh.NewInput().Title("Cost budget, USD, whole loop").Value(&v.cost).Validate(func(s string) error {
				f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || !(f > 0) {
					return errors.New("an amount in USD, more than 0")
				}
				return nil
			}),
			huh.NewInput().Title("Wall-clock budget, whole loop").Description("like 90m or 4h").Value(&v.wall).Validate(func(s string) error {
				d, err := time.ParseDuration(strings.TrimSpace(s))
				if err != nil || d <= 0 {
					return errors.New("a duration like 90m or 4h")
				}
				return nil
			}),
			huh.NewInput().Title("Stop when the same failure repeats this many times").Value(&v.sameFail).Validate(atLeast(2)),
		),
	).WithInput(in).WithOutput(out).WithShowHelp(true)
	if err := form.Run(); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return start, false, ErrAborted
		}
		return start, false, err
	}
	a = v.answers()
	a.TestFiles = start.TestFiles
	a.Example = start.Example
	if d := start.Detected; d != nil {
		counted := spec.CountedTestCommand(d.Command)
		if contains(a.Verify, counted) || contains(a.ObjectiveVerify, counted) {
			a.Detected = d
			a.Notes = append(append([]string(nil), start.Notes[:1]...), a.Notes...) // the detection's note comes first
		}
	}
	if err := PlanHoldout(filepath.Dir(path), &a); err != nil {
		return a, false, err
	}

	// The summary is plain text (a form's note would render it as Markdown).
	fmt.Fprintf(out, "\nSummary\n\n%s", a.Summary(path))
	if w := a.Weaknesses(); len(w) > 0 {
		fmt.Fprintln(out, "\nWarnings:")
		for _, s := range w {
			fmt.Fprintln(out, "  ! "+s)
		}
	}
	fmt.Fprintln(out)
	ok := true
	confirm := huh.NewForm(huh.NewGroup(
		huh.NewConfirm().Title("Write " + path + "?").Affirmative("Write it").Negative("Cancel").Value(&ok),
	)).WithInput(in).WithOutput(out)
	if err := confirm.Run(); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			return a, false, ErrAborted
		}
		return a, false, err
	}
	return a, ok, nil
}
