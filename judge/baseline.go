package judge

import (
	"slices"
	"strings"

	"github.com/looprinter/looprinter/spec"
)

// The baseline: the checks run once before any agent run. What failed then
// is the work's starting point, except under verify_baseline: new-only,
// where a failure a gate tolerates (it was there before the loop) is not
// the agent's business: the prompts show it only labelled as such, and no
// later signal carries it (ApplyBaseline).

// BeforeLoopLabel labels, in a prompt, the failures that were there before
// the loop and that verify_baseline: new-only excuses.
const BeforeLoopLabel = "failing before the loop; not part of this objective"

// ExcusedBefore says whether verify_baseline: new-only excuses the failures
// of cmd that were there before the loop: the cycle gate's checks (every
// gate's in the review shape), never the checks that decide DONE (the
// objective gate's, ralph's verify).
func ExcusedBefore(l *spec.Loop, cmd string) bool {
	if l.VerifyBaseline != "new-only" {
		return false
	}
	switch l.Shape {
	case spec.ShapeReview:
		return true
	case spec.ShapeRalph:
		return false
	}
	return slices.Contains(l.Verify, cmd) && !slices.Contains(l.ObjectiveVerify, cmd)
}

// BaselineSignals is each failing check's part of the baseline's failure
// signal, by command.
func BaselineSignals(rs []CheckResult) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		if !r.Pass {
			out[r.Command] = FailureSignal(nil, []CheckResult{r})
		}
	}
	return out
}

// SplitBaseline splits the baseline's failure signal (BaselineSignals) in
// two, in the order of the loop file's checks: what the work must fix, and
// what failed before the loop and is not part of the objective
// (ExcusedBefore).
func SplitBaseline(l *spec.Loop, signals map[string]string) (target, before string) {
	var t, b []string
	for _, c := range l.GateChecks() {
		s, ok := signals[c]
		if !ok {
			continue
		}
		if ExcusedBefore(l, c) {
			b = append(b, s)
		} else {
			t = append(t, s)
		}
	}
	return strings.Join(t, "\n"), strings.Join(b, "\n")
}

// BeforeLoopNote is what a prompt says above the failures that were there
// before the loop.
const BeforeLoopNote = "The checks below failed this way before the loop (verify_baseline: new-only): those failures are " + BeforeLoopLabel + ". Only new failures of these checks count; leave these as they are and do not work on them."
