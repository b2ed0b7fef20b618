//go:build !windows

package e2e

import (
	"testing"
	"time"
)

// Claude Code stops a run at the cost cap it is given itself: a wave of
// its build runs starts full from the first wave on, without
// agent.max_budget_usd, each run capped at its share of what the cost
// budget leaves. Each run here costs more than its share ($5 of $10) but
// less than the whole budget: both start at once and both end capped;
// with every run given the whole $10 as its cap, the first wave is one
// run and no run is capped.
func TestLoopWaveSharesTheCostBudget(t *testing.T) {
	k := kitFor(t, "claude")
	looprinter(t)
	srv := startAPI(t)
	l := newLoop(t, k, srv.URL, loopOpts{
		budget: "  iterations: 4\n  cycles: 2\n  wall: 20m\n  cost_usd: 10\n",
		extra:  "parallel: 2\n",
	})
	srv.Add(planReplies(k, l.dir)...)
	for _, b := range [][2]string{{"T-001", "one"}, {"T-002", "two"}} {
		for i, r := range buildReplies(k, l.dir, b[0], b[1]) {
			if i == 0 {
				r = withUsage(r, 1_500_000, 300_000, 0)
			}
			r.Match = "That is " + b[0] + ":"
			srv.Add(r)
		}
	}
	l.run(t, 12*time.Minute)
	evs := l.records(t)
	var starts, ends []event
	for _, e := range evs {
		if e.Phase == "build" && e.Event == "agent_start" {
			starts = append(starts, e)
		}
		if e.Phase == "build" && e.Event == "agent_end" {
			ends = append(ends, e)
		}
	}
	if len(starts) < 2 || len(ends) < 2 {
		t.Fatalf("build runs %+v / %+v, want two of one wave", starts, ends)
	}
	first, second := starts[0], starts[1]
	for _, e := range ends[:2] {
		t.Logf("%s: %s, $%.2f", e.Task, e.Status, e.CostUSD)
		if e.AgentRun == first.AgentRun && !second.TS.Before(first.TS.Add(time.Duration(e.DurationMS)*time.Millisecond)) {
			t.Errorf("the second build run started after the first ended: the first wave was one run")
		}
		if e.Status != "capped" {
			t.Errorf("build run for %s: status %q ($%.2f), want capped at its share of the budget", e.Task, e.Status, e.CostUSD)
		}
		if e.CostUSD <= 5 || e.CostUSD >= 10 {
			t.Errorf("build run for %s cost $%.2f: the test needs a run between the share ($5) and the budget ($10)", e.Task, e.CostUSD)
		}
	}
	assertNoLeftovers(t, l.mark)
}
