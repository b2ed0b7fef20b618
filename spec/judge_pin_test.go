package spec

// Tests that pin the judge's per-run cap rule under agents: (issue 18).

import (
	"strings"
	"testing"
)

// A phase's cap is judged by what the phase runs with: setting agents.build
// to exactly the agent's cap it inherited lowers nothing and is refused
// like any change that does not lower it; one below is kept; 0 (inherit
// again) from a lower override raises it and is refused.
func TestPinPhaseCapMustGoDown(t *testing.T) {
	base := "objective: x\nagent: {backend: claude, timeout: 20m, max_budget_usd: 2}\nagents:\n  build: {model: opus%s}\n"
	for _, c := range []struct {
		name, from, to string
		kept           bool
	}{
		{"timeout: inherited 20m to an explicit 20m", "", ", timeout: 20m", false},
		{"timeout: inherited 20m to 19m", "", ", timeout: 19m", true},
		{"timeout: 10m back to inherited 20m", ", timeout: 10m", "", false},
		{"max_budget_usd: inherited 2 to an explicit 2", "", ", max_budget_usd: 2", false},
		{"max_budget_usd: inherited 2 to 1.5", "", ", max_budget_usd: 1.5", true},
	} {
		v := Judge([]byte(strings.Replace(base, "%s", c.from, 1)), []byte(strings.Replace(base, "%s", c.to, 1)), "loop.yaml")
		if kept := len(v.Refused) == 0; kept != c.kept {
			t.Errorf("%s: kept %v, want %v (refused: %q)", c.name, kept, c.kept, v.Refused)
		}
	}
}

// The refusal of a phase's cap names what the phase would run with: 0 is
// shown as "unlimited", a number as itself.
func TestPinPhaseCapRefusalSaysUnlimited(t *testing.T) {
	before := "objective: x\nagent: {backend: claude, max_budget_usd: 0}\nagents:\n  build: {model: opus, max_budget_usd: 1.5}\n"
	after := "objective: x\nagent: {backend: claude, max_budget_usd: 0}\nagents:\n  build: {model: opus}\n"
	v := Judge([]byte(before), []byte(after), "loop.yaml")
	msg := strings.Join(v.Refused, "\n")
	if !strings.Contains(msg, "build would run with unlimited instead of 1.5") {
		t.Fatalf("refusal %q does not say build would run with unlimited instead of 1.5", msg)
	}
}
