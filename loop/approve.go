package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Plan approval (plan.approve). The loop's first plan waits for the
// operator's OK before any build run: `looprinter approve NAME`, the
// dashboard or HTTP API, the MCP server, each of which writes the OK into
// the engine's private folder (operator.PutApproval), where no agent run
// can. The wait is in the state (status: "waiting for plan approval");
// time waiting is not loop time; `looprinter stop` ends it. When no OK
// comes within the timeout, plan.approve.then says what happens: stop
// (BLOCKED; a new run asks again) or run (the plan goes on as it is).

// PlanWait is the first plan's wait for an OK.
type PlanWait struct {
	AskedAt  time.Time `json:"asked_at"`
	Deadline time.Time `json:"deadline"`
	Tasks    int       `json:"tasks"`
}

// ErrNotWaitingApproval: the loop is not waiting for plan approval.
var ErrNotWaitingApproval = fmt.Errorf("the loop is not waiting for plan approval")

// awaitsApproval says whether the loop must wait for an OK before its
// next step: a cycle loop with plan.approve on, about to build its first
// plan, not approved yet.
func (e *Engine) awaitsApproval() bool {
	a := e.spec.Plan.Approve
	return a.On && e.spec.Shape == spec.ShapeCycle && e.st.Phase == PhaseBuild && !e.st.PlanApproved && e.st.Judged != nil
}

// waitForApproval holds the loop until the first plan is approved or the
// timeout passes; nil: the loop goes on.
func (e *Engine) waitForApproval(ctx context.Context) *Outcome {
	if !e.awaitsApproval() {
		return nil
	}
	a := e.spec.Plan.Approve
	if e.st.PlanWait == nil {
		now := time.Now().UTC()
		e.st.PlanWait = &PlanWait{AskedAt: now, Deadline: now.Add(a.Timeout.D()), Tasks: len(e.st.Judged.Tasks)}
		// Saved before the record: whoever sees the record finds the loop
		// waiting.
		if err := e.store.checkpoint(); err != nil {
			return e.outcome(ReasonBlocked, "cannot save state: "+err.Error())
		}
		e.emit(record.Event{Event: record.PlanApproval, Kind: "asked",
			Message: fmt.Sprintf("the first plan (%d task(s), %s) waits for approval: looprinter approve %s, at most %s (then: %s)", e.st.PlanWait.Tasks, loopdir.OutputDir+"/plan.json", e.spec.Name, a.Timeout, a.Then)})
	}
	w := e.st.PlanWait
	for {
		if ok, err := e.approved(w); ok || err != nil {
			if err != nil {
				return e.outcome(ReasonBlocked, "cannot save state: "+err.Error())
			}
			return nil
		}
		if !time.Now().Before(w.Deadline) {
			return e.approvalTimeout(a)
		}
		select {
		case <-ctx.Done():
			return e.outcome(ReasonInterrupted, "interrupted while waiting for plan approval")
		case <-time.After(200 * time.Millisecond):
		}
		e.store.mark = time.Now() // time spent waiting for a person is not loop time
	}
}

// approved takes the operator's OK, if it came.
func (e *Engine) approved(w *PlanWait) (bool, error) {
	ap, ok := operator.TakeApproval(e.dir, w.AskedAt)
	if !ok {
		return false, nil
	}
	e.st.PlanWait, e.st.PlanApproved = nil, true
	e.emit(record.Event{Event: record.PlanApproval, Kind: "approved", By: ap.By, Message: fmt.Sprintf("the first plan was approved (%s); the build runs start", ap.By)})
	return true, e.store.checkpoint()
}

// approvalTimeout is what then does when no OK came in time.
func (e *Engine) approvalTimeout(a spec.PlanApprove) *Outcome {
	e.st.PlanWait = nil
	if a.Then == spec.ApproveThenRun {
		e.st.PlanApproved = true
		e.emit(record.Event{Event: record.PlanApproval, Kind: "timeout", Message: fmt.Sprintf("no approval within %s: the plan runs as it is (plan.approve.then: run)", a.Timeout)})
		if err := e.store.checkpoint(); err != nil {
			return e.outcome(ReasonBlocked, "cannot save state: "+err.Error())
		}
		return nil
	}
	e.emit(record.Event{Event: record.PlanApproval, Kind: "timeout", Message: fmt.Sprintf("no approval within %s: the loop stops (plan.approve.then: stop)", a.Timeout)})
	e.store.checkpoint()
	return e.outcome(ReasonBlocked, fmt.Sprintf("the first plan was not approved within %s (plan.approve.then: stop): read %s, then run the loop again and approve it (looprinter approve %s)", a.Timeout, loopdir.OutputDir+"/plan.json", e.spec.Name))
}
