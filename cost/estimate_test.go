package cost

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A command agent cannot be priced: the estimate says so instead of $0.
func TestEstimateLoopCommandAgent(t *testing.T) {
	l := &spec.Loop{Shape: spec.ShapeCycle, Agent: spec.Agent{Backend: "command", Command: "./agent.sh"},
		Budget: spec.Budget{Iterations: 10, Cycles: 2, CostUSD: 3}}
	e := DefaultAssumptions.EstimateLoop(l, DefaultTable(), LoopOptions{})
	if e.Priced || len(e.Commands) != 3 || e.Cap != 3 || e.WorstCase != 0 {
		t.Fatalf("%+v", e)
	}
	for _, r := range e.Runs {
		if !r.Command || r.Known {
			t.Errorf("run %+v", r)
		}
	}
	if len(e.Unknown) != 0 {
		t.Errorf("a command agent is not a model without a price: %v", e.Unknown)
	}
	l.Agent = spec.Agent{Backend: "claude", Model: "opus", MaxTurns: 10}
	e = DefaultAssumptions.EstimateLoop(l, DefaultTable(), LoopOptions{})
	if !e.Priced || e.PerAttempt <= 0 || len(e.Commands) != 0 {
		t.Fatalf("%+v", e)
	}
}

func TestBuildTable(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(f, []byte("mine: {cache_write: 1, cache_read: 0.1, output: 2}\n"), 0o644)
	tab, err := BuildTable(PriceSources{Loop: map[string]Price{"opus": {Output: 30}}, File: f, Overrides: []string{"Other=1,2,3"}})
	if err != nil {
		t.Fatal(err)
	}
	if tab["opus"].Output != 30 || tab["opus"].CacheWrite != 5 || tab["mine"].Output != 2 || tab["other"].Output != 3 {
		t.Fatalf("%+v %+v %+v", tab["opus"], tab["mine"], tab["other"])
	}
	if _, err := BuildTable(PriceSources{Overrides: []string{"x"}}); err == nil {
		t.Error("a bad --price was accepted")
	}
	os.WriteFile(f, []byte("mine: {bogus: 1}\n"), 0o644)
	if _, err := BuildTable(PriceSources{File: f}); err == nil {
		t.Error("an unknown field was accepted")
	}
}
