package wave

import (
	"math"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A build agent whose runs are stopped at their cost cap (claude by its
// CLI, command by the engine reading what a run reports it spent) knows
// a run's reserve from the start: each run is capped at its share of what
// is left, so nothing is wagered and the first wave is full.
func TestBudgetForHeldCap(t *testing.T) {
	l := &spec.Loop{Budget: spec.Budget{Iterations: 10, CostUSD: 10}, Agent: spec.Agent{Backend: "claude"}}
	if b := BudgetFor(l, Spent{AgentRuns: 1, CostUSD: 1}); b.Unknown || b.CostLeft != 9 {
		t.Errorf("claude, nothing known: %+v, want the reserve known", b)
	}
	l.Agent.Backend = "command"
	if b := BudgetFor(l, Spent{AgentRuns: 1, CostUSD: 1}); b.Unknown {
		t.Errorf("command, nothing known: %+v, want the reserve known", b)
	}
	l.Agent.Backend = "codex"
	if b := BudgetFor(l, Spent{AgentRuns: 1, CostUSD: 1}); !b.Unknown {
		t.Errorf("codex, nothing known: %+v, want Unknown (its CLI holds no cap)", b)
	}
	if w := Pick([]task{{id: "a"}, {id: "b"}, {id: "c"}}, nil, 3, BudgetFor(&spec.Loop{Budget: spec.Budget{Iterations: 10, CostUSD: 10}, Agent: spec.Agent{Backend: "claude"}}, Spent{})); len(w) != 3 {
		t.Errorf("claude's first wave: %d runs, want 3", len(w))
	}
}

// The cap a run of a wave gets: its agent's, lowered to what is left and,
// where its CLI holds the cap and runs start together, to its share.
func TestRunCap(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		backend   string
		cap, left float64
		n         int
		want      float64
	}{
		{"claude", 0, 9, 3, 3},   // a third of what is left each
		{"claude", 2, 9, 3, 2},   // its own cap is lower than its share
		{"claude", 0, 9, 1, 9},   // alone: all that is left
		{"claude", 0, inf, 3, 0}, // no cost budget: no cap
		{"claude", 5, inf, 3, 5}, // no cost budget: its own cap
		{"codex", 0, 9, 3, 9},    // no cap held: what is left, as a single run
		{"gemini", 4, 9, 3, 4},   // its own cap
		{"gemini", 12, 9, 3, 9},  // lowered to what is left
		{"command", 4, 9, 3, 3},  // the engine holds its cap: its share
		{"command", 2, 9, 3, 2},  // its own cap is lower than its share
	} {
		if got := RunCap(c.backend, c.cap, c.left, c.n); got != c.want {
			t.Errorf("RunCap(%s, %v, %v, %d) = %v, want %v", c.backend, c.cap, c.left, c.n, got, c.want)
		}
	}
}
