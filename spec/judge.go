package spec

import (
	"fmt"
	"reflect"
	"strings"
)

// Verdict is what Judge found: every change, and every change that removes
// or weakens a gate.
type Verdict struct {
	Changes []string
	Refused []string
}

// Judge compares two versions of a loop file. Changes to prompts, agents,
// post phases and added checks are fine; removing a check, changing the
// objective or the shape, relaxing the baseline, shrinking protect, or
// raising a budget or a per-run cap weakens the loop and is refused. Both
// the supervisor and the engine (for edits made during an agent run) use it:
// the gate is the point of the loop.
func Judge(before, after []byte, path string) Verdict {
	old, err := Parse(before, path)
	if err != nil {
		return Verdict{Refused: []string{"the previous loop file does not parse: " + err.Error()}}
	}
	nu, err := Parse(after, path)
	if err != nil {
		return Verdict{Refused: []string{"the new loop file is invalid: " + strings.Join(strings.Fields(err.Error()), " ")}}
	}
	var r Verdict
	change := func(name string, a, b any) bool {
		if reflect.DeepEqual(a, b) {
			return false
		}
		r.Changes = append(r.Changes, fmt.Sprintf("%s: %s → %s", name, short(a), short(b)))
		return true
	}
	refuse := func(format string, args ...any) { r.Refused = append(r.Refused, fmt.Sprintf(format, args...)) }

	change("prompts.plan", old.Prompts.Plan, nu.Prompts.Plan)
	change("prompts.build", old.Prompts.Build, nu.Prompts.Build)
	change("prompts.replan", old.Prompts.Replan, nu.Prompts.Replan)
	change("prompts.ralph", old.Prompts.Ralph, nu.Prompts.Ralph)
	change("agent", old.Agent, nu.Agent)
	change("agents", old.Agents, nu.Agents)
	change("post_phases", old.PostPhases, nu.PostPhases)
	change("vars", old.Vars, nu.Vars)
	if change("objective", old.Objective, nu.Objective) {
		refuse("changes the objective")
	}
	if change("shape", old.Shape, nu.Shape) {
		refuse("changes the loop's shape")
	}
	for _, g := range []struct {
		name     string
		old, new []string
	}{{"verify", old.Verify, nu.Verify}, {"objective_verify", old.ObjectiveVerify, nu.ObjectiveVerify}} {
		change(g.name, g.old, g.new)
		for _, c := range g.old {
			if !containsStr(g.new, c) {
				refuse("removes the %s check %q", g.name, c)
			}
		}
	}
	if change("verify_baseline", old.VerifyBaseline, nu.VerifyBaseline) && nu.VerifyBaseline != "all" {
		refuse("relaxes verify_baseline to %s", nu.VerifyBaseline)
	}
	change("protect", old.Protect, nu.Protect)
	if len(old.Protect) > 0 && len(nu.Protect) == 0 {
		refuse("empties protect")
	} else {
		for _, p := range old.Protect {
			if !containsStr(nu.Protect, p) {
				refuse("removes %q from protect", p)
			}
		}
	}
	oldDefaults := old.ProtectDefaults == nil || *old.ProtectDefaults
	newDefaults := nu.ProtectDefaults == nil || *nu.ProtectDefaults
	if oldDefaults && !newDefaults {
		r.Changes = append(r.Changes, "protect_defaults: true → false")
		refuse("turns protect_defaults off")
	}
	ob, nb := old.Budget, nu.Budget
	change("budget", ob, nb)
	for _, b := range []struct {
		name     string
		old, new float64
	}{
		{"iterations", float64(ob.Iterations), float64(nb.Iterations)},
		{"cycles", float64(ob.Cycles), float64(nb.Cycles)},
		{"cost_usd", ob.CostUSD, nb.CostUSD},
		{"wall", float64(ob.Wall), float64(nb.Wall)},
		{"same_failure", float64(ob.SameFailure), float64(nb.SameFailure)},
		{"gap_stall", float64(ob.GapStall), float64(nb.GapStall)},
	} {
		if b.new > b.old {
			refuse("raises budget.%s", b.name)
		}
	}
	oa, na := old.Agent, nu.Agent
	for _, c := range []struct {
		name     string
		old, new float64
	}{
		{"agent.timeout", float64(oa.Timeout), float64(na.Timeout)},
		{"agent.idle_timeout", float64(oa.IdleTimeout), float64(na.IdleTimeout)},
		{"agent.max_turns", float64(oa.MaxTurns), float64(na.MaxTurns)},
		{"agent.max_budget_usd", oa.MaxBudgetUSD, na.MaxBudgetUSD},
	} {
		if c.new > c.old || (c.name == "agent.max_budget_usd" && c.old > 0 && c.new == 0) {
			refuse("raises %s", c.name)
		}
	}
	return r
}

func short(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = fmt.Sprintf("%q", x)
	default:
		s = fmt.Sprint(v)
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
