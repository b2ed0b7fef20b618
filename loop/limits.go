package loop

import (
	"fmt"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/spec"
)

// The usage-limit policy (the loop file's `limits:`). With `wait` (the
// default) a run that hit a usage limit no fallback can take waits for
// the reset, within the wall budget; with `stop` the loop stops at once;
// with `{resume_within: "22:00-07:00"}` it waits only when the limit
// resets inside those hours (local time), else it stops. Waiting, the
// loop still ends at `looprinter stop` (the wait ends with the engine's
// context).

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

// waveLimitStop is limitStop for a run of a wave (waveTries, on the run's
// own goroutine): the same policy and the same stop, set on the run; its
// agent_end is written when the wave's runs are judged (finishWaveRun).
// It says whether the run stops.
func (r *runner) waveLimitStop(rn *waveRun, try int, wait time.Duration) bool {
	msg := r.limitSummary(rn.ran, wait)
	if msg == "" {
		return false
	}
	r.waveEmit(rn, r.retryEvent("build", rn.task.ID, rn.ran, costless(rn.res), try, wait))
	rn.stop = r.stop(ReasonBlocked, msg)
	return true
}

// limitSummary is the stop's summary when the loop's limits policy refuses
// to wait for a usage limit of ran that resets in wait ("" when it waits).
func (r *runner) limitSummary(ran spec.Agent, wait time.Duration) string {
	why := limitRefusal(r.spec().Limits, time.Now(), wait)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("usage limit: %s reported a usage limit that resets in %s (%s); %s", agentKey(ran), wait.Round(time.Second), time.Now().Add(wait).Format("Mon 15:04"), why)
}

// costless is a try's result without its cost and tokens: a record of it
// besides its agent_end, which counts them once.
func costless(res agent.Result) agent.Result {
	res.CostUSD, res.CostEstimated, res.InputTokens, res.OutputTokens, res.CachedTokens = 0, false, 0, 0, 0
	return res
}

// limitRefusal says why policy l does not wait from at for a limit that
// resets in wait ("" when it waits).
func limitRefusal(l spec.Limits, at time.Time, wait time.Duration) string {
	switch l.Policy {
	case spec.LimitsStop:
		return "limits: stop ends the loop at a usage limit; run it again once the limit has reset (the loop resumes where it stopped)"
	case spec.LimitsWindow:
		w, err := spec.ParseWindow(l.ResumeWithin)
		if err != nil {
			return "limits.resume_within cannot be read: " + err.Error()
		}
		if reset := at.Add(wait); !w.Holds(reset) {
			return fmt.Sprintf("it resets at %s, outside limits.resume_within %s: the loop stops rather than resume then; run it again in those hours (the loop resumes where it stopped)", reset.Format("15:04"), l.ResumeWithin)
		}
	}
	return ""
}
