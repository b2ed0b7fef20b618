package loop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The review shape lives in review/ (review.Shape), made with the engine;
// the engine runs it through reviewHost, its side of review.Host.

// reviewHost is the engine as the review shape sees it.
type reviewHost struct{ e *Engine }

var _ review.Host = reviewHost{}

func (h reviewHost) Spec() *spec.Loop               { return h.e.spec }
func (h reviewHost) Redactor() *redact.Redactor     { return h.e.red }
func (h reviewHost) Review() *review.State          { return h.e.st.Review }
func (h reviewHost) SetReview(rs *review.State)     { h.e.st.Review = rs }
func (h reviewHost) SetIterations(n int)            { h.e.st.Iterations = n }
func (h reviewHost) SetEvidence(lines []string)     { h.e.st.Evidence = lines }
func (h reviewHost) CostUSD() float64               { return h.e.st.CostUSD }
func (h reviewHost) Emit(ev record.Event)           { h.e.emit(ev) }
func (h reviewHost) Stop(reason, sum string) error  { return h.e.stop(reason, sum) }
func (h reviewHost) NotVerified(note string)        { h.e.st.addNotVerified(note) }
func (h reviewHost) Signature(signal string) string { return judge.Signature(signal) }

func (h reviewHost) RunAgent(ctx context.Context, phase, task, prompt string) (review.AgentRun, error) {
	run, err := h.e.run.runAgent(ctx, phase, false, task, prompt)
	if err != nil || run == nil {
		return review.AgentRun{}, err
	}
	out := review.AgentRun{Result: run.Result, Changed: run.Changed}
	if len(run.Tamper) > 0 {
		out.TamperNote = tamperNote(run.Tamper)
	}
	return out, nil
}

// RunChecks runs the gate checks; an interrupted run returns what ran,
// before the baseline. Evidence is labelled with the gate's name without
// its "review-" prefix (review-final: final).
func (h reviewHost) RunChecks(ctx context.Context, gate string) review.Checks {
	e := h.e
	cmds := e.spec.GateChecks()
	results := e.judge().RunChecks(ctx, gate, cmds)
	if ctx.Err() != nil {
		return review.Checks{Commands: len(cmds), Results: judge.ChecksOf(results)}
	}
	e.judge().ApplyBaseline(results, e.st.Baseline)
	return review.Checks{
		Commands:     len(cmds),
		Results:      judge.ChecksOf(results),
		Pass:         judge.AllPass(results),
		Signal:       judge.FailureSignal(nil, results),
		FirstFailure: judge.FirstFailure(results),
		Evidence:     judge.Evidence(strings.TrimPrefix(gate, "review-"), results, nil),
	}
}

func (h reviewHost) CleanRoom(ctx context.Context, gate string) (*record.CleanRoom, string) {
	return h.e.judge().JudgeCleanRoom(ctx, gate, h.e.spec.GateChecks())
}

func (h reviewHost) ProtectedFiles() ([]review.ProtectedFile, error) {
	files, _, err := h.e.guard.Files(h.e.spec)
	if err != nil {
		return nil, err
	}
	out := make([]review.ProtectedFile, 0, len(files))
	for _, f := range files {
		out = append(out, review.ProtectedFile{Path: f.Path, Rule: f.Rule})
	}
	return out, nil
}

func (h reviewHost) Render(phase, objective, src string) (string, error) {
	d := h.e.prompts.Data(phase)
	d.Objective = objective
	return Render(src, d)
}

// protectRules are the loop's protection rules for the next run. In the
// review shape the files under review (the diff from the base to the
// working tree) are the deliverable: a check that runs one of them does not
// make it a gate program, and the fixer may edit it (rs: the review's
// state, nil before the review started).
func protectRules(dir string, l *spec.Loop, rs *review.State) (*guard.ProtectRules, error) {
	rules, err := guard.NewProtectRules(dir, l)
	if err != nil || l.Shape != spec.ShapeReview || rs == nil || rs.BaseSHA == "" {
		return rules, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	paths, err := review.UnderReview(ctx, dir, rs.BaseSHA)
	if err != nil {
		return nil, fmt.Errorf("cannot list the files under review: %w", err)
	}
	rules.FreeDeliverables(paths)
	return rules, nil
}

// Strength is the verify_strength pass of the review shape's final
// checks, over the lines changed since the review's base commit: the
// review has no next prompt, so a pass below verify_strength.min ends it
// NOT VERIFIED with the survivors named.
func (h reviewHost) Strength(ctx context.Context, base string) (line string, hold bool, why string) {
	e := h.e
	vs := e.spec.VerifyStrength
	if !vs.On {
		return "", true, ""
	}
	kind, _ := sandbox.Resolve(e.spec.Sandbox)
	s := e.judge().Strength(ctx, judge.StrengthOptions{
		Base: base, Cmds: e.spec.GateChecks(), Kind: kind, Min: vs.Min, Budget: vs.Budget.D(), MaxMutants: vs.MaxMutants,
		Skip: e.judge().IsHoldout,
	})
	e.st.Strength = s
	line = record.StrengthLine(s)
	switch {
	case s.Error != "":
		e.st.addNotVerified(line)
		if vs.Min > 0 {
			return line, false, line + ": verify_strength.min cannot be checked"
		}
		return line, true, ""
	case s.Pass:
		return line, true, ""
	case len(s.Survivors) == 0:
		return line, false, line + ": no mutant of the changed lines was judged, so verify_strength.min cannot be shown to hold"
	}
	return line, false, fmt.Sprintf("%s. Survivors: %s", line, judge.SurvivorList(s, 5))
}
