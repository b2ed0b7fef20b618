package wave

import (
	"math"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/spec"
)

// Spent is what the loop spent so far, as its state counts it.
type Spent struct {
	Iterations, AgentRuns, BuildRuns int
	CostUSD, BuildCostUSD            float64
}

// BudgetFor is what the budgets of l leave for the runs of a wave, s
// spent: a run's reserve is the build agent's cap where set, else the mean
// cost of the loop's build runs so far (a plan run's cost says nothing of
// a build's). A build agent whose runs are stopped at their cost cap
// (agent.CapHeld: by its CLI, or by the engine reading what a run spent
// as it runs) wagers nothing on a guess: each run of a wave is capped at
// its share of what is left (RunCap), so the reserve is known from the
// first wave on.
func BudgetFor(l *spec.Loop, s Spent) Budget {
	b := Budget{IterationsLeft: l.Budget.Iterations - s.Iterations, CostLeft: math.Inf(1)}
	if l.Budget.CostUSD > 0 {
		b.CostLeft = l.Budget.CostUSD - s.CostUSD
	}
	build := l.AgentFor("build", false)
	b.PerRun = RunReserve(build.MaxBudgetUSD, s.BuildCostUSD, s.BuildRuns)
	b.Unknown = !(build.MaxBudgetUSD > 0 || s.BuildRuns > 0 || agent.CapHeld(build.Backend))
	return b
}

// RunCap is the cost cap a run of one of n runs started at once gets: its
// agent's max_budget_usd (0: none), lowered to what the cost budget
// leaves (left; +Inf: no cost budget) and, where its runs are stopped at
// their cap (agent.CapHeld) and n > 1, to its share of that (left/n):
// the runs of a wave together never spend past the budget. 0 is no cap.
func RunCap(backend string, maxBudgetUSD, left float64, n int) float64 {
	c := maxBudgetUSD
	if !math.IsInf(left, 1) && (c == 0 || left < c) {
		c = left
	}
	if n > 1 && agent.CapHeld(backend) && !math.IsInf(left, 1) && c > left/float64(n) {
		c = left / float64(n)
	}
	return c
}

// Width is how many of n attempts of a best-of the budgets of l let
// start, s spent: each is a build run counted against the iteration
// budget, and past the first each reserves a run's cost (RunReserve: the
// mean cost of the loop's runs so far) of what the cost budget leaves, as
// a wave's runs do.
func Width(l *spec.Loop, s Spent, n int) int {
	left := l.Budget.Iterations - s.Iterations
	perRun := RunReserve(l.AgentFor("build", false).MaxBudgetUSD, s.CostUSD, s.AgentRuns)
	k := 0
	for k < n && k < left {
		if k > 0 && l.Budget.CostUSD > 0 && l.Budget.CostUSD-s.CostUSD-float64(k+1)*perRun < 0 {
			break
		}
		k++
	}
	return k
}
