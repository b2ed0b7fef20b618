package spec

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The policies of `limits:`, what a loop does when an agent reports a
// usage limit (and no agent.fallback can take over).
const (
	// LimitsWait waits for the limit to reset, within the wall budget (the
	// default).
	LimitsWait = "wait"
	// LimitsStop stops the loop at once; run it again once the limit has
	// reset.
	LimitsStop = "stop"
	// LimitsWindow waits only when the limit resets inside resume_within
	// (a time of day window, local time); else it stops.
	LimitsWindow = "window"
)

// Limits is the loop file's `limits:`: `wait`, `stop`, or
// `{resume_within: "22:00-07:00"}`.
type Limits struct {
	// Policy is wait, stop or window (the mapping's).
	Policy string `yaml:"policy"`
	// ResumeWithin is the window, as written ("HH:MM-HH:MM").
	ResumeWithin string `yaml:"resume_within"`
}

// UnmarshalYAML reads `limits: wait|stop` or the mapping.
func (l *Limits) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = Limits{Policy: strings.ToLower(strings.TrimSpace(n.Value))}
		return nil
	}
	type plain Limits
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*l = Limits(p)
	if l.Policy == "" {
		l.Policy = LimitsWindow
	}
	return nil
}

// Window is a time of day window, in minutes after midnight; From > To
// crosses midnight ("22:00-07:00").
type Window struct{ From, To int }

// ParseWindow reads "HH:MM-HH:MM".
func ParseWindow(s string) (Window, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return Window{}, fmt.Errorf("%q is not a window: write HH:MM-HH:MM (local time), such as 22:00-07:00", s)
	}
	from, err := clock(a)
	if err != nil {
		return Window{}, err
	}
	to, err := clock(b)
	if err != nil {
		return Window{}, err
	}
	if from == to {
		return Window{}, fmt.Errorf("%q is an empty window: its start and end are the same time", s)
	}
	return Window{From: from, To: to}, nil
}

func clock(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM, 00:00 to 23:59)", strings.TrimSpace(s))
	}
	return t.Hour()*60 + t.Minute(), nil
}

// Holds says whether t's time of day (in t's location) is in the window:
// its start included, its end not.
func (w Window) Holds(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	if w.From < w.To {
		return m >= w.From && m < w.To
	}
	return m >= w.From || m < w.To
}

// validateLimits checks limits:.
func (l *Loop) validateLimits(at func(path, format string, args ...any)) {
	switch l.Limits.Policy {
	case LimitsWait, LimitsStop:
		if l.Limits.ResumeWithin != "" {
			at("limits", "limits: resume_within goes with the mapping form (limits: {resume_within: \"22:00-07:00\"})")
		}
	case LimitsWindow:
		if l.Limits.ResumeWithin == "" {
			at("limits", "limits: the mapping needs resume_within: \"HH:MM-HH:MM\", the local hours in which a loop may resume after a usage limit")
		} else if _, err := ParseWindow(l.Limits.ResumeWithin); err != nil {
			at("limits.resume_within", "limits.resume_within: %v", err)
		}
	default:
		at("limits", "limits: %q is not known: write wait (wait for a usage limit to reset, within the wall budget), stop (stop at once), or {resume_within: \"22:00-07:00\"} (wait only when the limit resets in those hours, else stop)", l.Limits.Policy)
	}
}
