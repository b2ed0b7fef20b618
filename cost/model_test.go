package cost

import (
	"fmt"
	"testing"
)

// The worked example of docs/cost.md.
func TestSeedWorkedExample(t *testing.T) {
	a := DefaultAssumptions
	tab := DefaultTable()

	cases := []struct {
		model         string
		n             int
		writes, reads int64
		output        int64
		usd           string
	}{
		{"opus", 30, 107000, 1798000, 24000, "$1.3746"},
		{"sonnet", 10, 47000, 288000, 8000, "$0.2551"},
		{"opus", 15, 62000, 553000, 12000, "$0.6606"},
	}
	for _, c := range cases {
		p, _, ok := tab.Lookup(c.model)
		if !ok {
			t.Fatalf("no default price for %s", c.model)
		}
		s := a.Session(c.model, p, c.n)
		if s.Writes != c.writes || s.Reads != c.reads || s.Output != c.output {
			t.Errorf("%s N=%d: tokens %d/%d/%d, want %d/%d/%d", c.model, c.n, s.Writes, s.Reads, s.Output, c.writes, c.reads, c.output)
		}
		if got := USD(s.USD); got != c.usd {
			t.Errorf("%s N=%d: %s, want %s", c.model, c.n, got, c.usd)
		}
	}

	e, err := a.EstimateReview(tab, ReviewLoop{
		Writer:   Role{Name: "writer", Model: "opus", Turns: 30},
		Reviewer: Role{Name: "reviewer", Model: "sonnet", Turns: 10},
		Fixer:    Role{Name: "fixer", Model: "opus", Turns: 15},
		Rounds:   3, FixCheck: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := USD(e.Total); got != "$4.3768" {
		t.Errorf("3 rounds + fix check = %s, want $4.3768", got)
	}
	// "about 3.2 times a single write"
	if got := fmt.Sprintf("%.1f", e.WriteRatio); got != "3.2" {
		t.Errorf("review loop / single write = %s, want 3.2", got)
	}
	// "stacking the same work in one session costs about 1.8 times more"
	if got := fmt.Sprintf("%.1f", e.PackedRatio); got != "1.8" {
		t.Errorf("packed / fresh = %s (packed %s over %d turns), want 1.8", got, USD(e.Packed.USD), e.Packed.Turns)
	}
	if e.Packed.Turns != 30+3*(10+15)+10 {
		t.Errorf("packed turns %d", e.Packed.Turns)
	}

	// Self-check question 4: 2 rounds, no fix verification.
	e2, _ := a.EstimateReview(tab, ReviewLoop{
		Writer:   Role{Name: "writer", Model: "opus", Turns: 30},
		Reviewer: Role{Name: "reviewer", Model: "sonnet", Turns: 10},
		Fixer:    Role{Name: "fixer", Model: "opus", Turns: 15},
		Rounds:   2,
	})
	if got := USD(e2.Total); got != "$3.2060" {
		t.Errorf("2 rounds, no fix check = %s, want $3.2060", got)
	}
}

func TestPackedGrowsWithSquare(t *testing.T) {
	a := DefaultAssumptions
	p := DefaultTable()["opus"]
	// Doubling the turns of one session more than doubles its cost; two
	// fresh sessions of N cost exactly twice one.
	one, two := a.Session("opus", p, 50), a.Session("opus", p, 100)
	if two.USD <= 2*one.USD {
		t.Fatalf("packed 100 turns %s is not more than two sessions of 50 (%s)", USD(two.USD), USD(2*one.USD))
	}
	if a.Session("opus", p, 0).USD != 0 {
		t.Fatal("zero turns should cost nothing")
	}
}

func TestPerTask(t *testing.T) {
	v, err := PerTask(4.3768, 0.5)
	if err != nil || USD(v) != "$8.7536" {
		t.Fatalf("PerTask = %v, %v", v, err)
	}
	for _, bad := range []float64{0, -0.1, 1.5} {
		if _, err := PerTask(1, bad); err == nil {
			t.Errorf("success rate %g accepted", bad)
		}
	}
}

func TestTableLookupAndMerge(t *testing.T) {
	tab := DefaultTable().Merge(map[string]Price{
		"gpt-5":  {CacheWrite: 1.25, CacheRead: 0.125, Output: 10},
		"Sonnet": {Output: 15},
	})
	if p, k, ok := tab.Lookup("claude-opus-5-5"); !ok || k != "opus" || p.CacheWrite != 5 {
		t.Errorf("claude-opus-5-5 → %v %q %v", p, k, ok)
	}
	if p, _, _ := tab.Lookup("sonnet"); p.Output != 15 || p.CacheWrite != 2.5 {
		t.Errorf("merged sonnet = %+v", p)
	}
	if p, k, ok := tab.Lookup("gpt-5-codex"); !ok || k != "gpt-5" || p.Output != 10 {
		t.Errorf("gpt-5-codex → %v %q %v", p, k, ok)
	}
	if _, _, ok := tab.Lookup("mystery-model"); ok {
		t.Error("a model in no table must not get a price")
	}
	// Other vendors come from the engine's list prices, cache write at the
	// input price where the list has none.
	if p, k, ok := DefaultTable().Lookup("gemini-2.5-pro"); !ok || k != "gemini-2.5-pro" || p.CacheWrite != 1.25 || p.CacheRead != 0.31 || p.Output != 10 {
		t.Errorf("gemini-2.5-pro → %+v %q %v", p, k, ok)
	}
	// A Claude Opus or Sonnet model name uses the worked example's price.
	if p, k, _ := DefaultTable().Lookup("claude-sonnet-4-5"); k != "sonnet" || p.CacheWrite != 2.5 {
		t.Errorf("claude-sonnet-4-5 → %+v %q", p, k)
	}
}

func TestParsePrice(t *testing.T) {
	p, err := ParsePrice("5, 0.2 ,20")
	if err != nil || p != (Price{Input: 5, CacheWrite: 5, CacheRead: 0.2, Output: 20}) {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = ParsePrice("1.25,0.125,10,1.25")
	if err != nil || p.Input != 1.25 {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"5,0.2", "a,b,c", "1,2,3,4,5", "-1,0,0"} {
		if _, err := ParsePrice(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
