package failover

// Moved from the engine's tests of its small pure decisions (issue 18).

import (
	"testing"
	"time"
)

// The default backoff: 5s·3^(n-1), at most 10 minutes, whatever n is.
func TestPinDefaultBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{
		0: 5 * time.Second, 1: 5 * time.Second, 2: 15 * time.Second, 3: 45 * time.Second, 4: 135 * time.Second,
		5: 405 * time.Second, 6: 10 * time.Minute, 7: 10 * time.Minute, 1 << 30: 10 * time.Minute,
	} {
		if got := Backoff(n); got != want {
			t.Errorf("defaultBackoff(%d) = %s, want %s", n, got, want)
		}
	}
}
