package stopping

import (
	"fmt"
	"time"

	"github.com/looprinter/looprinter/spec"
)

// The usage-limit policy (the loop file's `limits:`). With `wait` (the
// default) a run that hit a usage limit no fallback can take waits for
// the reset, within the wall budget; with `stop` the loop stops at once;
// with `{resume_within: "22:00-07:00"}` it waits only when the limit
// resets inside those hours (local time), else it stops. Waiting, the
// loop still ends at `looprinter stop` (the wait ends with the engine's
// context).

// LimitSummary is the stop's summary when policy l refuses to wait from at
// for a usage limit of agent (its key) that resets in wait ("" when it
// waits).
func LimitSummary(l spec.Limits, agent string, at time.Time, wait time.Duration) string {
	why := LimitRefusal(l, at, wait)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("usage limit: %s reported a usage limit that resets in %s (%s); %s", agent, wait.Round(time.Second), at.Add(wait).Format("Mon 15:04"), why)
}

// LimitRefusal says why policy l does not wait from at for a limit that
// resets in wait ("" when it waits).
func LimitRefusal(l spec.Limits, at time.Time, wait time.Duration) string {
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
