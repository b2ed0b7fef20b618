package agent

import (
	"testing"
	"time"
)

// A run killed at its timeout, one killed early (its timeout cut to the
// wall budget left), one killed idle; a run that ended is not killed.
func TestKilledNote(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{Status: StatusTimeout, Duration: 10 * time.Minute}, "the agent run was killed after the 10m0s timeout without finishing"},
		{Result{Status: StatusTimeout, Duration: 9 * time.Minute}, "the agent run was killed after the 10m0s timeout without finishing"},
		{Result{Status: StatusTimeout, Duration: 8*time.Minute + 123*time.Millisecond}, "the agent run was killed after 8m0.1s without finishing: the loop's wall budget ran out"},
		{Result{Status: StatusIdle}, "the agent run was killed: no output for 2m0s (idle timeout)"},
		{Result{Status: StatusOK}, ""},
	} {
		if got := KilledNote(c.res, 10*time.Minute, 2*time.Minute); got != c.want {
			t.Errorf("KilledNote(%s after %s) = %q, want %q", c.res.Status, c.res.Duration, got, c.want)
		}
	}
	if got := KilledNote(Result{Status: StatusTimeout, Duration: time.Second}, 0, 0); got != "the agent run was killed after the 0s timeout without finishing" {
		t.Errorf("no timeout set: %q", got)
	}
}
