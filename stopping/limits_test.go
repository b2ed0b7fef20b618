package stopping

import (
	"testing"
	"time"

	"github.com/looprinter/looprinter/spec"
)

// The window's edges: its start inside, its end outside, across midnight.
func TestLimitRefusalWindow(t *testing.T) {
	at := time.Date(2026, 12, 3, 21, 0, 0, 0, time.Local)
	night := spec.Limits{Policy: spec.LimitsWindow, ResumeWithin: "22:00-07:00"}
	for _, c := range []struct {
		wait time.Duration
		ok   bool
	}{
		{59 * time.Minute, false}, {time.Hour, true}, {5 * time.Hour, true}, {9*time.Hour + 59*time.Minute, true}, {10 * time.Hour, false}, {14 * time.Hour, false},
	} {
		if got := LimitRefusal(night, at, c.wait) == ""; got != c.ok {
			t.Errorf("reset at %s: waits %v, want %v", at.Add(c.wait).Format("15:04"), got, c.ok)
		}
	}
	if LimitRefusal(spec.Limits{Policy: spec.LimitsWait}, at, 100*time.Hour) != "" {
		t.Error("limits: wait refused to wait")
	}
	if LimitRefusal(spec.Limits{Policy: spec.LimitsStop}, at, time.Second) == "" {
		t.Error("limits: stop waited")
	}
	day := spec.Limits{Policy: spec.LimitsWindow, ResumeWithin: "09:00-17:00"}
	if LimitRefusal(day, at, 12*time.Hour) != "" || LimitRefusal(day, at, time.Hour) == "" {
		t.Error("a window within one day is read wrong")
	}
}
