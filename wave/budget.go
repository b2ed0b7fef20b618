package wave

import (
	"math"

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
// a build's).
func BudgetFor(l *spec.Loop, s Spent) Budget {
	b := Budget{IterationsLeft: l.Budget.Iterations - s.Iterations, CostLeft: math.Inf(1)}
	if l.Budget.CostUSD > 0 {
		b.CostLeft = l.Budget.CostUSD - s.CostUSD
	}
	capUSD := l.AgentFor("build", false).MaxBudgetUSD
	b.PerRun = RunReserve(capUSD, s.BuildCostUSD, s.BuildRuns)
	b.Unknown = !(capUSD > 0 || s.BuildRuns > 0)
	return b
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
