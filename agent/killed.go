package agent

import (
	"fmt"
	"time"
)

// KilledNote describes a run the runner had to kill, as a failure signal
// ("" when it was not killed): timeout and idle are the run's timeout and
// idle timeout from the loop file. A run killed well before its timeout
// had it cut to what was left of the loop's wall budget.
func KilledNote(res Result, timeout, idle time.Duration) string {
	switch res.Status {
	case StatusTimeout:
		if timeout > 0 && res.Duration > 0 && res.Duration < timeout*9/10 {
			// The run's timeout was cut to what was left of budget.wall.
			return fmt.Sprintf("the agent run was killed after %s without finishing: the loop's wall budget ran out", res.Duration.Round(100*time.Millisecond))
		}
		return fmt.Sprintf("the agent run was killed after the %s timeout without finishing", timeout)
	case StatusIdle:
		return fmt.Sprintf("the agent run was killed: no output for %s (idle timeout)", idle)
	}
	return ""
}
