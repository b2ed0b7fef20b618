package spec

// Tests that pin the defaults a loop file gets for what it leaves out, and
// keeps for what it sets (issue 18).

import (
	"reflect"
	"testing"
)

func TestPinDefaultsFillOnlyWhatIsUnset(t *testing.T) {
	unset, err := Parse([]byte("objective: x\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := Parse([]byte(`objective: x
budget: {gap_stall: 7, api_retries: 9}
review: {max_rounds: 6}
notify: {on: [stop]}
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"budget.gap_stall unset", unset.Budget.GapStall, DefaultGapStall},
		{"budget.api_retries unset", unset.Budget.APIRetries, DefaultAPIRetries},
		{"review.max_rounds unset", unset.Review.MaxRounds, DefaultReviewRounds},
		{"notify.on unset", []string(unset.Notify.On), []string{"stop", "blocked", "no_progress", "budget_80", "question"}},
		{"budget.gap_stall set", set.Budget.GapStall, 7},
		{"budget.api_retries set", set.Budget.APIRetries, 9},
		{"review.max_rounds set", set.Review.MaxRounds, 6},
		{"notify.on set", []string(set.Notify.On), []string{"stop"}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.field, c.got, c.want)
		}
	}
}

// A phase's command, args and env override the agent's; env is merged key
// by key; a phase without them inherits the agent's.
func TestPinPhaseCommandArgsEnv(t *testing.T) {
	l, err := Parse([]byte(`objective: x
agent:
  backend: command
  command: ./agent.sh
  args: [--fast]
  env: {A: "1", B: "2"}
agents:
  build:
    command: ./builder.sh
    args: [--slow]
    env: {B: "3", C: "4"}
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := l.AgentFor("build", false)
	if b.Command != "./builder.sh" || !reflect.DeepEqual(b.Args, []string{"--slow"}) || !reflect.DeepEqual(b.Env, map[string]string{"A": "1", "B": "3", "C": "4"}) {
		t.Errorf("build agent: command %q args %q env %v; want ./builder.sh [--slow] A=1 B=3 C=4", b.Command, b.Args, b.Env)
	}
	p := l.AgentFor("plan", false)
	if p.Command != "./agent.sh" || !reflect.DeepEqual(p.Args, []string{"--fast"}) || !reflect.DeepEqual(p.Env, map[string]string{"A": "1", "B": "2"}) {
		t.Errorf("plan agent: command %q args %q env %v; want the agent's", p.Command, p.Args, p.Env)
	}
	if !reflect.DeepEqual(l.Agent.Env, map[string]string{"A": "1", "B": "2"}) {
		t.Errorf("the agent's env changed by merging: %v", l.Agent.Env)
	}
}
