package spec

// Tests that pin how a phase's agent is merged over the loop's agent
// (issue 18): each per-phase field either overrides or is inherited.

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPinPhaseAgentOverridesAndInherits(t *testing.T) {
	l, err := Parse([]byte(`objective: x
agent:
  backend: claude
  permissions: [Write, Edit]
  timeout: 30m
  idle_timeout: 4m
  grace: 20s
  max_turns: 12
  max_budget_usd: 3
agents:
  build:
    permissions: [Read]
    timeout: 7m
    idle_timeout: 90s
    grace: 5s
    max_turns: 4
    max_budget_usd: 0.75
  plan:
    model: opus
  reviewer:
    permissions: ["mode=plan"]
  post: {timeout: 11m}
post_phases:
  - {name: docs, prompt: write the docs, done: DOCS_DONE}
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		perms                []string
		timeout, idle, grace time.Duration
		turns                int
		cap                  float64
	}
	inherited := want{[]string{"Write", "Edit"}, 30 * time.Minute, 4 * time.Minute, 20 * time.Second, 12, 3}
	for _, c := range []struct {
		phase string
		post  bool
		want  want
	}{
		{"build", false, want{[]string{"Read"}, 7 * time.Minute, 90 * time.Second, 5 * time.Second, 4, 0.75}},
		{"plan", false, inherited},
		{"replan", false, inherited},
		{"ralph", false, inherited},
		{"reviewer", false, want{[]string{"mode=plan"}, 30 * time.Minute, 4 * time.Minute, 20 * time.Second, 12, 3}},
		{"docs", true, want{[]string{"Write", "Edit"}, 11 * time.Minute, 4 * time.Minute, 20 * time.Second, 12, 3}},
	} {
		a := l.AgentFor(c.phase, c.post)
		got := want{[]string(a.Permissions), a.Timeout.D(), a.IdleTimeout.D(), a.Grace.D(), a.MaxTurns, a.MaxBudgetUSD}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("agent of %s: %+v, want %+v", c.phase, got, c.want)
		}
	}
	// The loop's own agent is not changed by a phase's override.
	if a := l.Agent; !reflect.DeepEqual([]string(a.Permissions), []string{"Write", "Edit"}) || a.Timeout.D() != 30*time.Minute || a.MaxBudgetUSD != 3 {
		t.Errorf("agent changed by merging: %+v", a)
	}
}

// A phase without permissions of its own, under an agent without any,
// keeps none (the documented default); a phase that sets them gets them.
func TestPinPhasePermissionsWithoutAgentPermissions(t *testing.T) {
	l, err := Parse([]byte("objective: x\nagents:\n  build: {permissions: [Read]}\n  plan: {model: opus}\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p := l.AgentFor("build", false).Permissions; !reflect.DeepEqual([]string(p), []string{"Read"}) {
		t.Errorf("build permissions %q, want [Read]", p)
	}
	if p := l.AgentFor("plan", false).Permissions; p != nil {
		t.Errorf("plan permissions %q, want none", p)
	}
}

// A problem the structure check reports is not reported a second time by
// the meaning check on the same line: one message per problem line.
func TestPinOneMessagePerProblemLine(t *testing.T) {
	_, err := Parse([]byte("objective: [a, b]\nshape: cycle\n"), "loop.yaml")
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("want a problem, got %v", err)
	}
	if len(se.Problems) != 1 || se.Problems[0].Line != 1 {
		t.Fatalf("want one problem on line 1, got %d:\n%s", len(se.Problems), se)
	}
	if n := strings.Count(se.Error(), "\n  loop.yaml:"); n != 1 {
		t.Errorf("%d problem lines in the message, want 1:\n%s", n, se)
	}
	// Two problems on two lines are both reported.
	_, err = Parse([]byte("objective: [a, b]\nshape: square\n"), "loop.yaml")
	if !errors.As(err, &se) || len(se.Problems) != 2 {
		t.Fatalf("want two problems, got %v", err)
	}
	if !strings.Contains(se.Error(), "(2 problems)") {
		t.Errorf("message %q does not count 2 problems", se)
	}
}

// A phase's fallback agents and fallback_after override the loop agent's;
// a phase without them inherits the loop agent's (issue 18: the merge of
// both was unpinned).
func TestPinPhaseFallbackOverridesAndInherits(t *testing.T) {
	l, err := Parse([]byte(`objective: x
agent:
  backend: claude
  fallback:
    - {backend: codex}
  fallback_after: 2h
agents:
  build:
    fallback:
      - {backend: gemini}
    fallback_after: 30m
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	build := l.AgentFor("build", false)
	if len(build.Fallback) != 1 || build.Fallback[0].Backend != "gemini" || build.FallbackAfter.D() != 30*time.Minute {
		t.Errorf("build's fallback: %+v after %s, want gemini after 30m", build.Fallback, build.FallbackAfter.D())
	}
	plan := l.AgentFor("plan", false)
	if len(plan.Fallback) != 1 || plan.Fallback[0].Backend != "codex" || plan.FallbackAfter.D() != 2*time.Hour {
		t.Errorf("plan's fallback: %+v after %s, want codex after 2h (inherited)", plan.Fallback, plan.FallbackAfter.D())
	}
}

// A phase's agent keeps the loop's escalation unless it names its own.
func TestPinAgentForEscalation(t *testing.T) {
	l, err := Parse([]byte(`objective: x
verify: ["true"]
agent:
  backend: claude
  escalate:
    - {after: 2, model: opus}
agents:
  build:
    escalate:
      - {after: 3, model: sonnet}
  plan:
    model: haiku
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if e := l.AgentFor("build", false).Escalate; len(e) != 1 || e[0].Model != "sonnet" || e[0].After != 3 {
		t.Errorf("build's escalation: %+v, want its own (sonnet after 3)", e)
	}
	if e := l.AgentFor("plan", false).Escalate; len(e) != 1 || e[0].Model != "opus" || e[0].After != 2 {
		t.Errorf("plan's escalation: %+v, want the loop's (opus after 2, inherited)", e)
	}
}
