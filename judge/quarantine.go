package judge

import (
	"context"

	"github.com/looprinter/looprinter/spec"
)

// rerunQuarantine, under flaky: quarantine, runs each failing check of a
// judging gate once more on the same tree before its failure counts: a
// check that passes then flipped, and is recorded flaky with the tests
// that flipped (ApplyQuarantine then leaves those tests out of the
// verdict, markKnownFlaky names the flake in a signal that still fails).
// A check that fails again failed for real. Without this only the clean
// room's flips were quarantined, and a flaky test that failed at the first
// gate was sent to the agent as a real failure, with no word of it.
func (j *Judge) rerunQuarantine(ctx context.Context, gate string, results []CheckResult, logPath func(i, run int) string) {
	if mode, _ := j.spec().FlakyRule(); mode != spec.FlakyQuarantine || !judgingGate(gate) {
		return
	}
	for i := range results {
		first := results[i]
		if first.Pass || first.TimedOut || ctx.Err() != nil {
			continue
		}
		rs := j.runVisibleChecks(ctx, []string{first.Command}, func(int) string { return logPath(i, 2) })
		if len(rs) == 0 || !rs[0].Pass {
			continue
		}
		j.noteFlaky(gate, "rerun", first.Command, Flipped(first, rs[0]))
	}
}
