package spec

import (
	"errors"
	"testing"
)

// FuzzParse: any loop file gets a loop or a list of problems, each with a
// line and a column, never a panic; a loop that parses has its durations
// and amounts of money within bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"objective: x\n", "objective: x\nagent: {backend: command}\n", "shape: [\n", "budget: {wall: 1d}\nobjective: y\n",
		"post_phases:\n  - name: a\n    prompt: '{{'\n", "agents:\n  plan: 3\n", "&a [*a]", "protect: ['[']\n",
		// Durations that overflowed, money that was not money.
		"objective: x\nbudget: {wall: 213504d}\n", "objective: x\nbudget: {wall: 1000000d}\n",
		"objective: x\nagent: {timeout: 99999999999999999999d}\n", "objective: x\nschedule: {every: 9999999999h}\n",
		"objective: x\nagents: {plan: {grace: -1s}}\n", "objective: x\ncheck_timeout: 366d\n",
		"objective: x\nbudget: {cost_usd: .inf}\n", "objective: x\nagent: {max_budget_usd: .nan}\n",
		"objective: x\nagents: {build: {max_budget_usd: -1}}\n", "objective: x\nprices: {m: {input: 1e400, output: -.inf}}\n",
		// Syntax errors yaml.v3 misplaces or does not place.
		"# header\n# header\n\nobjective: x\nbudget:\n  cycles: 3 # c\n   wall: 4h\n",
		"# header\n\nobjective: x\nbudget:\n  cycles: 3\n wall: 4h\n", "objective: x\nbudget:\n\twall: 4h\n",
		"objective: x\nbudget: {wall: *nope}\n", "objective: \"x\x01\"\n", "objective: \"\xff\"\n", "\xfe\xff\x00o",
		"objective: \"x\nverify: [a\n", "objective: x\r\nverify: [\"\x7f\"]\r\n",
		// Second documents, unclosed quotes on the first line.
		"objective: x\n---\nbudget: {wall: 1h}\n", "objective: x\n--- # c\nbudget: [\n", "objective: 'x\nverify: [a]",
		// Empty keys and empty entries.
		"objective: x\nbudget:\nverify:\nagent:\n", "shape: ralph\nobjective: x\nverify:\n", "objective: x\nverify:\n  -\n",
		// Cron expressions, including ones that panic robfig/cron.
		"objective: x\nschedule: {cron: '61 * * * *'}\n", "objective: x\nschedule: {cron: 'TZ=UTC'}\n",
		"objective: x\nschedule: {cron: 'CRON_TZ=x'}\n", "objective: x\nschedule: {cron: '0 0 31 2 *'}\n",
		"objective: x\nschedule: {cron: '@every -1s'}\n", "objective: x\nschedule: {cron: '*/0 * * * *', every: 1h}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, "/tmp/loop.yaml")
		if err == nil && l == nil {
			t.Fatal("nil loop without an error")
		}
		var se *Error
		if err != nil {
			if !errors.As(err, &se) {
				t.Fatalf("not a *spec.Error: %v", err)
			}
			for _, p := range se.Problems {
				if p.Line < 1 || p.Column < 1 {
					t.Errorf("problem without a position: %s", p)
				}
			}
			return
		}
		for _, d := range []Duration{l.Agent.Timeout, l.Agent.IdleTimeout, l.Agent.Grace, l.CheckTimeout, l.Schedule.Every, l.Budget.Wall} {
			if d < 0 || d.D() > MaxDuration {
				t.Errorf("duration %d out of bounds", d)
			}
		}
		for name, a := range l.Agents {
			for _, d := range []Duration{a.Timeout, a.IdleTimeout, a.Grace} {
				if d < 0 || d.D() > MaxDuration {
					t.Errorf("agents.%s: duration %d out of bounds", name, d)
				}
			}
			if !ValidMoney(a.MaxBudgetUSD) {
				t.Errorf("agents.%s.max_budget_usd %v", name, a.MaxBudgetUSD)
			}
		}
		money := []float64{l.Budget.CostUSD, l.Agent.MaxBudgetUSD}
		for _, p := range l.Prices {
			money = append(money, p.Input, p.Output, p.CacheRead, p.CacheWrite)
		}
		for _, m := range money {
			if !ValidMoney(m) {
				t.Errorf("amount %v out of bounds", m)
			}
		}
	})
}
