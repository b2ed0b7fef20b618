package wave

import (
	"math"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// What the budgets leave for a wave: the iterations and cost left, a
// run's reserve from the build agent's cap, else the mean build run, and
// Unknown while neither is known.
func TestBudgetFor(t *testing.T) {
	l := &spec.Loop{Budget: spec.Budget{Iterations: 10, CostUSD: 10}}
	b := BudgetFor(l, Spent{Iterations: 4, AgentRuns: 5, CostUSD: 3, BuildCostUSD: 0})
	if b.IterationsLeft != 6 || b.CostLeft != 7 || b.PerRun != 0 || !b.Unknown {
		t.Errorf("nothing known: %+v", b)
	}
	b = BudgetFor(l, Spent{Iterations: 4, AgentRuns: 5, BuildRuns: 4, CostUSD: 9, BuildCostUSD: 8})
	if b.PerRun != 2 || b.Unknown || b.CostLeft != 1 {
		t.Errorf("the mean build run: %+v", b)
	}
	l.Budget.CostUSD = 0
	if b := BudgetFor(l, Spent{}); !math.IsInf(b.CostLeft, 1) {
		t.Errorf("no cost budget: %+v", b)
	}
	if w := Width(&spec.Loop{Budget: spec.Budget{Iterations: 10, CostUSD: 10}}, Spent{Iterations: 1, AgentRuns: 2, CostUSD: 6}, 3); w != 1 {
		t.Errorf("Width = %d, want 1 ($4 left at $3 a run)", w)
	}
}
