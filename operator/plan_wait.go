package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// Plan approval (plan.approve). The loop's first plan waits for the
// operator's OK before any build run: `looprinter approve NAME`, the
// dashboard or HTTP API, the MCP server, each of which writes the OK into
// the engine's private folder (PutApproval), where no agent run can. The
// wait is in the state (status: "waiting for plan approval"); time waiting
// is not loop time; `looprinter stop` ends it. When no OK comes within the
// timeout, plan.approve.then says what happens: stop (BLOCKED; a new run
// asks again) or run (the plan goes on as it is).

// PlanWait is the first plan's wait for an OK.
type PlanWait struct {
	AskedAt  time.Time `json:"asked_at"`
	Deadline time.Time `json:"deadline"`
	Tasks    int       `json:"tasks"`
}

// ErrNotWaitingApproval: the loop is not waiting for plan approval.
var ErrNotWaitingApproval = fmt.Errorf("the loop is not waiting for plan approval")

// ApproveThenRun is plan.approve.then's value that lets the plan run on at
// the timeout.
const ApproveThenRun = "run"

// PlanGate holds a loop's first plan until the operator's OK.
type PlanGate struct {
	Dir   string       // the loop folder
	Rules func() Rules // the loop file in force
	Emit  func(record.Event)
	// FirstPlan says whether the loop is about to build its judged plan,
	// and how many tasks the plan has.
	FirstPlan func() (tasks int, ok bool)
	// Approved and Wait are the state's: the plan was approved (or ran on
	// at the timeout), and the wait under way.
	Approved *bool
	Wait     **PlanWait
	// Save, Stop and Idle are as a Channel's.
	Save func() error
	Stop func(reason, summary string) error
	Idle func()
}

// awaits says whether the loop must wait for an OK before its next step: a
// cycle loop with plan.approve on, about to build its first plan, not
// approved yet.
func (g *PlanGate) awaits() bool {
	_, first := g.FirstPlan()
	return g.Rules().Approve && first && !*g.Approved
}

// Hold holds the loop until the first plan is approved or the timeout
// passes; nil: the loop goes on. It stops the loop otherwise.
func (g *PlanGate) Hold(ctx context.Context) error {
	if !g.awaits() {
		return nil
	}
	l := g.Rules()
	if *g.Wait == nil {
		tasks, _ := g.FirstPlan()
		now := time.Now().UTC()
		*g.Wait = &PlanWait{AskedAt: now, Deadline: now.Add(l.ApproveTimeout), Tasks: tasks}
		// Saved before the record: whoever sees the record finds the loop
		// waiting.
		if err := g.Save(); err != nil {
			return g.Stop(StopBlocked, "cannot save state: "+err.Error())
		}
		g.Emit(record.Event{Event: record.PlanApproval, Kind: "asked",
			Message: fmt.Sprintf("the first plan (%d task(s), %s) waits for approval: looprinter approve %s, at most %s (then: %s)", (*g.Wait).Tasks, loopdir.OutputDir+"/plan.json", l.Name, l.ApproveTimeout, l.ApproveThen)})
	}
	w := *g.Wait
	for {
		if ok, err := g.approved(w); ok || err != nil {
			if err != nil {
				return g.Stop(StopBlocked, "cannot save state: "+err.Error())
			}
			return nil
		}
		if !time.Now().Before(w.Deadline) {
			return g.timeout(l)
		}
		select {
		case <-ctx.Done():
			return g.Stop(StopInterrupted, "interrupted while waiting for plan approval")
		case <-time.After(200 * time.Millisecond):
		}
		g.Idle() // time spent waiting for a person is not loop time
	}
}

// approved takes the operator's OK, if it came.
func (g *PlanGate) approved(w *PlanWait) (bool, error) {
	ap, ok := TakeApproval(g.Dir, w.AskedAt)
	if !ok {
		return false, nil
	}
	*g.Wait, *g.Approved = nil, true
	g.Emit(record.Event{Event: record.PlanApproval, Kind: "approved", By: ap.By, Message: fmt.Sprintf("the first plan was approved (%s); the build runs start", ap.By)})
	return true, g.Save()
}

// timeout is what then does when no OK came in time.
func (g *PlanGate) timeout(l Rules) error {
	*g.Wait = nil
	if l.ApproveThen == ApproveThenRun {
		*g.Approved = true
		g.Emit(record.Event{Event: record.PlanApproval, Kind: "timeout", Message: fmt.Sprintf("no approval within %s: the plan runs as it is (plan.approve.then: run)", l.ApproveTimeout)})
		if err := g.Save(); err != nil {
			return g.Stop(StopBlocked, "cannot save state: "+err.Error())
		}
		return nil
	}
	g.Emit(record.Event{Event: record.PlanApproval, Kind: "timeout", Message: fmt.Sprintf("no approval within %s: the loop stops (plan.approve.then: stop)", l.ApproveTimeout)})
	g.Save()
	return g.Stop(StopBlocked, fmt.Sprintf("the first plan was not approved within %s (plan.approve.then: stop): read %s, then run the loop again and approve it (looprinter approve %s)", l.ApproveTimeout, loopdir.OutputDir+"/plan.json", l.Name))
}
