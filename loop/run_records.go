// The records of an agent run: its agent_end and agent_retry, the
// changes refused in it, how it exited, and the prices a run is costed at.

package loop

import (
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/textcut"
)

// recordTamper writes a violation for each protected file a run changed.
func (r *runner) recordTamper(phase, task string, ts []guard.Tamper) {
	r.recordTamperTo(r.emit, phase, task, ts)
}

// recordTamperTo is recordTamper writing its records (confine.Violation)
// with emit: an attempt judged beside others writes them tagged with its
// run (bestof_judging.go); what it keeps in the state (a tell, for the
// audit) is taken under the state's save lock.
func (r *runner) recordTamperTo(emit func(record.Event), phase, task string, ts []guard.Tamper) {
	for _, t := range ts {
		if t.Kind == guard.TestAware && t.Rule != confine.SecretRule {
			r.noteTell(t.File + ": " + t.What)
		}
		emit(confine.Violation(phase, task, t))
	}
}

// retryRecord writes the agent_retry of a try that will be retried after
// wait (0: at once, on another agent), naming the agent that ran it.
func (r *runner) retryRecord(phase, task string, ran spec.Agent, res agent.Result, try int, wait time.Duration) {
	r.emit(r.retryEvent(phase, task, ran, res, try, wait))
}

// retryEvent is the agent_retry record of a try.
func (r *runner) retryEvent(phase, task string, ran spec.Agent, res agent.Result, try int, wait time.Duration) record.Event {
	return record.Event{Event: record.AgentRetry, Phase: phase, Task: task, Backend: ran.Backend, Model: ran.Model,
		Status: string(res.Status), Attempt: try, WaitMS: wait.Milliseconds(), Error: res.Error, Transcript: res.Transcript,
		InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, CachedTokens: res.CachedTokens,
		CostUSD: res.CostUSD, CostEstimated: res.CostEstimated}
}

func (r *runner) endRecord(phase, task string, a spec.Agent, res agent.Result, changed []string) {
	r.net.Flush()
	r.countEnd(phase, res)
	r.emit(r.endEvent(phase, task, a, res, changed))
}

// countEnd counts an ended agent run in the state.
func (r *runner) countEnd(phase string, res agent.Result) {
	r.st.AgentMS += res.Duration.Milliseconds()
	if phase == "build" {
		r.st.BuildCostUSD += res.CostUSD
		r.st.BuildRuns++
	}
}

// endEvent is the agent_end record of an ended agent run.
func (r *runner) endEvent(phase, task string, a spec.Agent, res agent.Result, changed []string) record.Event {
	return record.Event{Event: record.AgentEnd, Phase: phase, Task: task, Backend: a.Backend, Model: a.Model,
		Status: string(res.Status), ExitCode: exitOf(res), Signal: res.Signal, Ended: res.Ended, Turns: res.Turns,
		InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, CachedTokens: res.CachedTokens,
		CostUSD: res.CostUSD, CostEstimated: res.CostEstimated, DurationMS: res.Duration.Milliseconds(),
		Transcript: rel(r.dir, res.Transcript), FilesChanged: changed, SessionID: res.SessionID, Tools: res.Tools,
		Promise: res.Promise, Blocked: res.Blocked, Error: res.Error, Message: firstLines(res.FinalMessage, 3)}
}

// killedNote describes a run the engine had to kill, as a failure signal
// (agent.KilledNote).
func killedNote(a spec.Agent, res agent.Result) string {
	return agent.KilledNote(res, a.Timeout.D(), a.IdleTimeout.D())
}

func prices(p map[string]spec.Price) map[string]agent.Price {
	if len(p) == 0 {
		return nil
	}
	out := map[string]agent.Price{}
	for k, v := range p {
		out[k] = agent.Price(v)
	}
	return out
}

func short(v any) string { return textcut.Short(v) }

// exitUnknown is the exit code of a run whose exit status was never
// collected: its agent_end carries none.
const exitUnknown = -1 << 31

// exitOf is the exit code an agent_end records: none when a signal ended
// the run (Signal says which) or its status is not known.
func exitOf(res agent.Result) *int {
	if res.Signal != "" || res.ExitCode == exitUnknown {
		return nil
	}
	return record.Int(res.ExitCode)
}
