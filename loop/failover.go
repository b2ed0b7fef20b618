package loop

import (
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/failover"
	"github.com/looprinter/looprinter/spec"
)

// Which agent a run starts with and goes on with, failover on usage limits
// and escalation after repeated failures, is failover.Switch's; its records
// stay in the state (FailoverState, EscalationState). The runner holds one.

// newSwitch is the runner's failover.Switch, over the state's records.
func newSwitch(r *runner) *failover.Switch {
	return &failover.Switch{Spec: r.spec, Dir: r.dir, Emit: r.emit,
		Failover: &r.st.Failover, Escalation: &r.st.Escalation, Cycle: &r.st.Cycle, SameCount: &r.st.SameCount}
}

// agentKey names an agent for limits and records (failover.Key).
func agentKey(a spec.Agent) string { return failover.Key(a) }

// chooseAgent is the agent a run of phase starts with (Switch.Choose).
func (r *runner) chooseAgent(phase, task string, a spec.Agent) spec.Agent {
	return r.agents.Choose(phase, task, a)
}

// failoverOnLimit is the agent a run goes on with after a usage limit
// (Switch.OnLimit).
func (r *runner) failoverOnLimit(phase, task string, first, cur spec.Agent, wait time.Duration) (spec.Agent, time.Duration, bool) {
	return r.agents.OnLimit(phase, task, first, cur, wait)
}

// escalate is the agent a run starts with after its task's failures
// (Switch.Escalate).
func (r *runner) escalate(phase, task string, first, a spec.Agent) spec.Agent {
	return r.agents.Escalate(phase, task, first, a)
}

// untry takes back one run of task from the escalation's count
// (Switch.Untry).
func (r *runner) untry(task string, first spec.Agent) { r.agents.Untry(task, first) }

// setAgent points a request at another agent.
func setAgent(req *agent.Request, a spec.Agent) { failover.SetAgent(req, a) }

// EscalationLines are the escalations of a state, for status and the
// report.
func EscalationLines(st *State) []string {
	if st == nil {
		return nil
	}
	return failover.Lines(st.Escalation)
}
