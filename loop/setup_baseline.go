package loop

import (
	"context"
	"fmt"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// The loop's first two steps (verdicts' part): the setup commands, run
// once per loop folder, and the baseline, the checks run before any agent
// run.

// setup runs the setup commands once per loop directory.
func (v *verdicts) setup(ctx context.Context) error {
	l := v.spec()
	if !v.st.SetupDone && len(l.Setup) > 0 {
		results := v.judge().RunChecks(ctx, "setup", l.Setup)
		pass := judge.AllPass(results)
		v.emit(record.Event{Event: record.Setup, Pass: record.Bool(pass), Checks: judge.ChecksOf(results)})
		if ctx.Err() != nil {
			return v.stop(ReasonInterrupted, "interrupted during setup")
		}
		if !pass {
			return v.stop(ReasonBlocked, "setup failed: "+judge.FirstFailure(results)+"; fix it and run again (setup runs again until it passes)")
		}
	}
	v.st.SetupDone = true
	v.st.Phase = PhaseBaseline
	return nil
}

// baseline runs the checks once before the first agent run and records
// what already fails; it stops the loop when the checks cannot judge it.
func (v *verdicts) baseline(ctx context.Context) error {
	l := v.spec()
	if !v.st.BaselineDone {
		v.strengthBase(ctx)
		cmds := l.GateChecks()
		base := map[string][]string{}
		baselineSignal := ""
		var baselineChecks map[string]string
		if len(cmds) > 0 {
			results := v.judge().RunChecks(ctx, "baseline", cmds)
			if ctx.Err() != nil {
				return v.stop(ReasonInterrupted, "interrupted during the baseline checks")
			}
			v.judge().MarkShared(results)
			for _, r := range results {
				if !r.Pass {
					base[r.Command] = normalizeAll(r.Lines)
				}
			}
			baselineSignal = judge.FailureSignal(nil, results)
			baselineChecks = judge.BaselineSignals(results)
			v.emit(record.Event{Event: record.Baseline, Pass: record.Bool(judge.AllPass(results)), Checks: judge.ChecksOf(results),
				Message: fmt.Sprintf("%d of %d checks already fail before any agent run", len(base), len(cmds)) + sharedNote(results)})
			v.roll.noteCheckpoint(results, true, nil)
			holdoutSignal, err := v.judgeBaseline(ctx, results)
			if err != nil {
				return err // the baseline runs again next time
			}
			if baselineSignal == "" {
				baselineSignal = holdoutSignal
			}
			v.judge().SaveTestBase(results, false)
		}
		v.st.Baseline = base
		v.st.BaselineSignal = baselineSignal
		v.st.BaselineChecks = baselineChecks
		v.st.BaselineDone = true
	}
	switch l.Shape {
	case spec.ShapeRalph:
		v.st.Phase = PhaseRalph
	case spec.ShapeReview:
		v.st.Phase = PhaseReview
	default:
		v.st.Phase = PhasePlan
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
