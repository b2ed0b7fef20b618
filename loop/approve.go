package loop

import (
	"time"

	"github.com/looprinter/looprinter/operator"
)

// Plan approval (plan.approve) is operator.PlanGate's: the loop's first
// plan waits for the operator's OK before any build run. The wait stays in
// the state.

// ErrNotWaitingApproval: the loop is not waiting for plan approval.
var ErrNotWaitingApproval = operator.ErrNotWaitingApproval

// newPlanGate is the engine's operator.PlanGate, over its state.
func newPlanGate(e *Engine) *operator.PlanGate {
	st := e.st
	return &operator.PlanGate{Dir: e.dir, Rules: func() operator.Rules { return operatorRules(e.spec) }, Emit: e.emit,
		FirstPlan: func() (int, bool) {
			if st.Phase != PhaseBuild || st.Judged == nil {
				return 0, false
			}
			return len(st.Judged.Tasks), true
		},
		Approved: &st.PlanApproved, Wait: &st.PlanWait,
		Save: e.store.checkpoint, Stop: e.stop, Idle: func() { e.store.mark = time.Now() }}
}
