package prompt

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/textcut"
)

// State is what of the loop's state the prompts show, as pointers into
// it: the state stays the engine's, and a prompt shows it as it is when
// the prompt is built.
type State struct {
	Cycle, Iterations *int
	// The last attempt's failure signal, how many times in a row it came
	// and what was tried against it.
	LastFailure *string
	SameCount   *int
	Tried       *[]string
	// What the last cycle's gates left for the re-plan: the cycle gate's
	// errors or the objective's gap, and what was tried against each.
	PendingErrors     *[]string
	PendingGap        *string
	GateSame, GapSame *int
	GateTried         *[]string
	// What the checks said before any agent run: the signal, each check's
	// part of it, and the failure lines of a state saved before either was
	// kept.
	BaselineSignal *string
	BaselineChecks *map[string]string
	Baseline       *map[string][]string
}

// Builder puts together the prompt of each phase from the loop file in
// force, the loop's folder and its state.
type Builder struct {
	Dir   string
	Spec  func() *spec.Loop // the loop file in force
	State State
	// Stop is what a template that cannot be rendered does: the loop
	// stops BLOCKED with summary.
	Stop func(summary string) error
}

// Data is what every prompt of phase shows.
func (b *Builder) Data(phase string) Data {
	l, s := b.Spec(), b.State
	return Data{
		Objective: l.Objective, Phase: phase, Cycle: *s.Cycle, Iteration: *s.Iterations,
		Paths:  Paths{Dir: b.Dir, Plan: loopdir.OutputDir + "/plan.json", Progress: loopdir.OutputDir + "/progress.txt", Records: loopdir.RecordsDir},
		Schema: PlanSchema, Vars: l.Vars, Repeated: *s.SameCount >= 2, Tried: *s.Tried,
		Verify: l.Verify, ObjectiveVerify: l.ObjectiveVerify, Baseline: b.Baseline(),
	}
}

// Render renders phase's prompt from the loop file's template user, or
// the built-in one when it has none; a template that cannot be rendered
// stops the loop.
func (b *Builder) Render(phase, user string, d Data) (string, error) {
	src := user
	if src == "" {
		src = Builtin(phase)
	}
	out, err := Render(src, d)
	if err != nil {
		return "", b.Stop(err.Error())
	}
	return out, nil
}

// Plan is the prompt of a plan run, or of a re-plan when the last cycle's
// gates left errors or a gap, and which of the two it is.
func (b *Builder) Plan() (phase, prompt string, err error) {
	l, s := b.Spec(), b.State
	phase, user := "plan", l.Prompts.Plan
	d := b.Data("plan")
	if len(*s.PendingErrors) > 0 || *s.PendingGap != "" {
		phase, user = "replan", l.Prompts.Replan
		d.Phase = phase
		// Check output is data: it must not be able to close the fence.
		d.Errors = Defang(strings.Join(*s.PendingErrors, "\n"))
		d.Gap = Defang(*s.PendingGap)
		d.Repeated, d.Tried = *s.GateSame >= 2, *s.GateTried
		if d.Gap != "" {
			d.Repeated, d.Tried = *s.GapSame >= 2, nil
		}
	}
	prompt, err = b.Render(phase, user, d)
	return phase, prompt, err
}

// Build is the prompt of the next build run, on task of the plan's tasks.
func (b *Builder) Build(task plan.Task, tasks []plan.Task) (string, error) {
	d := b.Data("build")
	d.Iteration = *b.State.Iterations + 1
	d.Task, d.Tasks = task, tasks
	d.Failure = b.lastFailure()
	return b.Render("build", b.Spec().Prompts.Build, d)
}

// Ralph is the prompt of the next ralph attempt: ralph's template, or
// build's when the loop file has no ralph one.
func (b *Builder) Ralph() (string, error) {
	d := b.Data("ralph")
	d.Iteration = *b.State.Iterations + 1
	d.Failure = b.lastFailure()
	l := b.Spec()
	user := l.Prompts.Ralph
	if user == "" {
		user = l.Prompts.Build
	}
	return b.Render("ralph", user, d)
}

// Post is the prompt of a step of post phase p. One that does not show
// its done signal gets the line that asks for it.
func (b *Builder) Post(p spec.PostPhase) (string, error) {
	d := b.Data(p.Name)
	d.Done = p.Done
	prompt, err := b.Render(p.Name, p.Prompt, d)
	if err != nil {
		return "", err
	}
	if !strings.Contains(prompt, "<promise>"+p.Done+"</promise>") {
		// The line alone: Render would add the objective and the failure
		// blocks again, in the middle of the prompt.
		if add, err := Render(postTpl, Data{Phase: d.Phase, Done: d.Done}); err == nil {
			prompt = strings.TrimRight(prompt, "\n") + "\n" + add
		}
	}
	return prompt, nil
}

// lastFailure is the last attempt's failure signal, fenced; "" when there
// is none.
func (b *Builder) lastFailure() string {
	if f := *b.State.LastFailure; f != "" {
		return Fence("output of the checks on the last attempt", f)
	}
	return ""
}

// Baseline is the baseline's failure signal for the prompts, fenced: what
// failed before any agent run. Under verify_baseline: new-only, the
// failures a gate tolerates are apart, labelled as not part of the
// objective. A state saved before the signal was kept has only the failure
// lines, normalized, per check.
func (b *Builder) Baseline() string {
	l, s := b.Spec(), b.State
	signal := *s.BaselineSignal
	before := ""
	if len(*s.BaselineChecks) > 0 {
		signal, before = judge.SplitBaseline(l, *s.BaselineChecks)
	} else if signal == "" && len(*s.Baseline) > 0 {
		var sb strings.Builder
		for _, c := range l.GateChecks() {
			if lines, ok := (*s.Baseline)[c]; ok {
				fmt.Fprintf(&sb, "$ %s\n%s\n", c, strings.Join(lines, "\n"))
			}
		}
		signal = strings.TrimRight(sb.String(), "\n")
	} else if l.VerifyBaseline == "new-only" && signal != "" {
		// A state of before the checks were kept apart: which failure is
		// whose cannot be told, so none is shown as the work's.
		signal, before = "", signal
	}
	var parts []string
	if signal != "" {
		parts = append(parts, Fence("output of the checks before any agent run", signal))
	}
	if before != "" {
		parts = append(parts, judge.BeforeLoopNote+"\n"+Fence(judge.BeforeLoopLabel, before))
	}
	return strings.Join(parts, "\n\n")
}

// PlanSummary is plan in one line, for what this cycle tried: its tasks,
// each "T-001 title", cut to 300 characters; nil is no valid plan.
func (b *Builder) PlanSummary(p *plan.Plan) string {
	if p == nil {
		return fmt.Sprintf("cycle %d: no valid plan", *b.State.Cycle)
	}
	var titles []string
	for _, t := range p.Tasks {
		titles = append(titles, t.ID+" "+t.Title)
	}
	return fmt.Sprintf("cycle %d plan: %s", *b.State.Cycle, textcut.Cut(strings.Join(titles, "; "), 300))
}
