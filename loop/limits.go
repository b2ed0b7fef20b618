package loop

import (
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/stopping"
)

// The usage-limit policy (the loop file's `limits:`) is stopping's
// (stopping/limits.go): here, the stop it asks for.

// limitStop stops the loop when its limits policy refuses to wait for a
// usage limit that resets in wait; nil when the loop waits. The try that
// hit the limit is recorded (its cost once, on its agent_end).
func (r *runner) limitStop(phase, task string, ran spec.Agent, res agent.Result, try int, wait time.Duration) error {
	msg := r.limitSummary(ran, wait)
	if msg == "" {
		return nil
	}
	r.retryRecord(phase, task, ran, costless(res), try, wait)
	r.endRecord(phase, task, ran, res, nil)
	return r.stop(ReasonBlocked, msg)
}

// limitSummary is the stop's summary when the loop's limits policy refuses
// to wait for a usage limit of ran that resets in wait ("" when it waits).
func (r *runner) limitSummary(ran spec.Agent, wait time.Duration) string {
	return stopping.LimitSummary(r.spec().Limits, agentKey(ran), time.Now(), wait)
}

// costless is a try's result without its cost and tokens: a record of it
// besides its agent_end, which counts them once.
func costless(res agent.Result) agent.Result {
	res.CostUSD, res.CostEstimated, res.InputTokens, res.OutputTokens, res.CachedTokens = 0, false, 0, 0, 0
	return res
}
