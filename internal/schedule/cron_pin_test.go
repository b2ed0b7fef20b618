package schedule

import "testing"

// A malformed time zone prefix is an error, never a panic.
func TestParseCronBadZoneIsAnError(t *testing.T) {
	for _, expr := range []string{"TZ=Zone", "CRON_TZ=", "TZ=UTC"} {
		if _, err := Parse(0, expr); err == nil {
			t.Errorf("%q accepted", expr)
		}
	}
}
