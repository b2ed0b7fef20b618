package loop

import (
	"context"
	"fmt"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// The loop's first two steps: the setup commands, run once per loop
// folder, and the baseline, the checks run before any agent run.

// stepSetup runs the setup commands once per loop directory.
func (e *Engine) stepSetup(ctx context.Context) error {
	if !e.st.SetupDone && len(e.spec.Setup) > 0 {
		results := e.judge().RunChecks(ctx, "setup", e.spec.Setup)
		pass := judge.AllPass(results)
		e.emit(record.Event{Event: record.Setup, Pass: record.Bool(pass), Checks: judge.ChecksOf(results)})
		if ctx.Err() != nil {
			return e.stop(ReasonInterrupted, "interrupted during setup")
		}
		if !pass {
			return e.stop(ReasonBlocked, "setup failed: "+judge.FirstFailure(results)+"; fix it and run again (setup runs again until it passes)")
		}
	}
	e.st.SetupDone = true
	e.st.Phase = PhaseBaseline
	return nil
}

// stepBaseline runs the checks once before the first agent run and records
// what already fails; it stops the loop when the checks cannot judge it.
func (e *Engine) stepBaseline(ctx context.Context) error {
	if !e.st.BaselineDone {
		e.noteStrengthBase(ctx)
		cmds := e.spec.GateChecks()
		base := map[string][]string{}
		baselineSignal := ""
		var baselineChecks map[string]string
		if len(cmds) > 0 {
			results := e.judge().RunChecks(ctx, "baseline", cmds)
			if ctx.Err() != nil {
				return e.stop(ReasonInterrupted, "interrupted during the baseline checks")
			}
			e.judge().MarkShared(results)
			for _, r := range results {
				if !r.Pass {
					base[r.Command] = normalizeAll(r.Lines)
				}
			}
			baselineSignal = judge.FailureSignal(nil, results)
			baselineChecks = judge.BaselineSignals(results)
			e.emit(record.Event{Event: record.Baseline, Pass: record.Bool(judge.AllPass(results)), Checks: judge.ChecksOf(results),
				Message: fmt.Sprintf("%d of %d checks already fail before any agent run", len(base), len(cmds)) + sharedNote(results)})
			e.roll.noteCheckpoint(results, true, nil)
			holdoutSignal, err := e.judgeBaseline(ctx, results)
			if err != nil {
				return err // the baseline runs again next time
			}
			if baselineSignal == "" {
				baselineSignal = holdoutSignal
			}
			e.judge().SaveTestBase(results, false)
		}
		e.st.Baseline = base
		e.st.BaselineSignal = baselineSignal
		e.st.BaselineChecks = baselineChecks
		e.st.BaselineDone = true
	}
	switch e.spec.Shape {
	case spec.ShapeRalph:
		e.st.Phase = PhaseRalph
	case spec.ShapeReview:
		e.st.Phase = PhaseReview
	default:
		e.st.Phase = PhasePlan
	}
	return nil
}

func normalizeAll(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, judge.Normalize(l))
	}
	return out
}
