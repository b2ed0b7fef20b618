package loop

import (
	"testing"

	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/spec"
)

// The operator channel stops the loop with the engine's reasons.
func TestOperatorStopReasons(t *testing.T) {
	for got, want := range map[string]string{operator.StopBlocked: ReasonBlocked, operator.StopNoProgress: ReasonNoProgress, operator.StopInterrupted: ReasonInterrupted} {
		if got != want {
			t.Errorf("operator stops with %q, the engine's reason is %q", got, want)
		}
	}
}

// The operator channel's names for the loop file's values are the loop
// file's.
func TestOperatorRuleValues(t *testing.T) {
	if operator.TimeoutBlocked != spec.OnTimeoutBlocked || operator.TimeoutContinue != spec.OnTimeoutContinue || operator.ApproveThenRun != spec.ApproveThenRun {
		t.Error("operator's on_timeout or plan.approve.then values differ from the loop file's")
	}
}
