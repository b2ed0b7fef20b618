package loop

import (
	"context"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/operator"
	"github.com/looprinter/looprinter/spec"
)

// The operator channel's engine side is operator.Channel: how to ask, the
// answer and the guidance a prompt carries, the question a run asked and
// the wait for its answer. The question and the answer stay in the state.

// errAsked ends a step whose agent asked a question (operator.ErrAsked).
var errAsked = operator.ErrAsked

// newChannel is the runner's operator.Channel, over the state.
func newChannel(r *runner) *operator.Channel {
	return &operator.Channel{Dir: r.dir, Rules: func() operator.Rules { return operatorRules(r.spec()) }, Emit: r.emit,
		Question: &r.st.Question, Answered: &r.st.Answered, GuidanceTold: &r.st.GuidanceTold, Unanswered: &r.st.Unanswered,
		Save: r.store.checkpoint, Stop: r.stop, Idle: func() { r.store.mark = time.Now() }}
}

// operatorRules are what of loop file l the operator channel follows.
func operatorRules(l *spec.Loop) operator.Rules {
	a := l.Plan.Approve
	return operator.Rules{Name: l.Name, AskTimeout: l.AskTimeout.D(), OnTimeoutContinue: l.OnTimeout == spec.OnTimeoutContinue, SameFailure: l.Budget.SameFailure,
		Approve: a.On && l.Shape == spec.ShapeCycle, ApproveTimeout: a.Timeout.D(), ApproveThen: a.Then}
}

// withOperator adds the operator channel to a prompt (Channel.WithOperator).
func (r *runner) withOperator(prompt string) (string, []string) { return r.ops.WithOperator(prompt) }

// afterOperator settles the operator channel after an agent run
// (Channel.After).
func (r *runner) afterOperator(ctx context.Context, phase, task string, res agent.Result, told []string) {
	r.ops.After(ctx, phase, task, res.Status == agent.StatusInterrupted, res.FinalMessage, told)
}

// recordGuidance records the guidance a prompt carries the first time
// (Channel.RecordGuidance).
func (r *runner) recordGuidance(phase, task string, told []string) {
	r.ops.RecordGuidance(phase, task, told)
}

// asked turns a run that asked a question into a wait (Channel.Asked).
func (r *runner) asked(phase, task string, run *AgentRun, prompt string, seq int) error {
	return r.ops.Asked(phase, task, run.Result.FinalMessage, len(run.Tamper) > 0, prompt, seq)
}

// waitForAnswer holds the loop while a question is open
// (Channel.WaitForAnswer).
func (r *runner) waitForAnswer(ctx context.Context) error { return r.ops.WaitForAnswer(ctx) }
