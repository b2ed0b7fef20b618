package loop

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/sandbox"
)

// Six tasks in three independent pairs (T-002 after T-001, T-004 after
// T-003, T-006 after T-005).
func pairsPlan() *Plan {
	p := &Plan{}
	for i := 1; i <= 6; i++ {
		t := Task{ID: "T-00" + string(rune('0'+i))}
		if i%2 == 0 {
			t.DependsOn = []string{"T-00" + string(rune('0'+i-1))}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

func waveIDs(ts []Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.ID)
	}
	return strings.Join(s, ",")
}

func TestPickWave(t *testing.T) {
	p := pairsPlan()
	plenty := waveBudget{IterationsLeft: 30, CostLeft: 25, PerRun: 1}
	cases := []struct {
		name     string
		inFlight []string
		slots    int
		b        waveBudget
		want     string
	}{
		{"three slots take the three heads", nil, 3, plenty, "T-001,T-003,T-005"},
		{"one slot is today's order", nil, 1, plenty, "T-001"},
		{"a task in flight is not started twice", []string{"T-003"}, 3, plenty, "T-001,T-005"},
		{"no free slot", []string{"T-001", "T-003"}, 2, plenty, ""},
		{"the iteration budget bounds the wave", nil, 3, waveBudget{IterationsLeft: 2, CostLeft: 25, PerRun: 1}, "T-001,T-003"},
		{"no iteration left", nil, 3, waveBudget{IterationsLeft: 0, CostLeft: 25, PerRun: 1}, ""},
		// $2.50 left at $1 a run: the first as today, then two more reserved.
		{"the cost reserve bounds the wave", nil, 3, waveBudget{IterationsLeft: 30, CostLeft: 2.5, PerRun: 1}, "T-001,T-003"},
		{"a run in flight holds its reserve", []string{"T-005"}, 3, waveBudget{IterationsLeft: 30, CostLeft: 1.5, PerRun: 1}, ""},
		// Nothing in flight: the first run is decided as a single run is.
		{"the first run as today", nil, 3, waveBudget{IterationsLeft: 30, CostLeft: 0.5, PerRun: 1}, "T-001"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fl := map[string]bool{}
			for _, id := range c.inFlight {
				fl[id] = true
			}
			if got := waveIDs(pickWave(p, fl, c.slots, c.b)); got != c.want {
				t.Fatalf("wave %q, want %q", got, c.want)
			}
		})
	}
	// A dependent task waits for its pair's head to pass, not to start.
	p.Tasks[0].Passes = true
	if got := waveIDs(pickWave(p, map[string]bool{"T-003": true}, 3, plenty)); got != "T-002,T-005" {
		t.Fatalf("after T-001 passed: %q", got)
	}
}

// Each slot has a layer and a journal of its own, none inside another's;
// slot 0 is today's layer.
func TestSlotLayers(t *testing.T) {
	dir := t.TempDir()
	l0, j0 := slotLayer(dir, 0)
	if ll := loopLayer(dir); l0.Upper != ll.Upper || l0.Work != ll.Work || l0.Target != ll.Target || slotLayerName(0) != "loop" {
		t.Fatalf("slot 0 is not today's layer: %+v", l0)
	}
	seen := map[string]bool{}
	var layers []sandbox.Layer
	for k := 0; k < 4; k++ {
		l, j := slotLayer(dir, k)
		if k == 0 && j != j0 {
			t.Fatal("slot 0's journal moved")
		}
		for _, p := range []string{l.Upper, l.Work, j} {
			if seen[p] {
				t.Fatalf("slot %d shares %s", k, p)
			}
			seen[p] = true
		}
		if l.Target != dir {
			t.Fatalf("slot %d lays over %s", k, l.Target)
		}
		layers = append(layers, l)
	}
	for i, a := range layers {
		for j, b := range layers {
			if i != j && (sandbox.Within(a.Upper, filepath.Dir(b.Upper)) || sandbox.Within(a.Work, filepath.Dir(b.Work))) {
				t.Fatalf("slot %d's layer is inside slot %d's folder", i, j)
			}
		}
	}
}

func TestParallelSaving(t *testing.T) {
	s := time.Second
	// One at a time: the runs never sum past the wall time.
	if saved, line := parallelSaving([]time.Duration{2 * s, 2 * s, 2 * s}, 7*s); saved != 0 || line != "" {
		t.Fatalf("sequential runs saved %v %q", saved, line)
	}
	saved, line := parallelSaving([]time.Duration{2 * s, 2 * s, 2 * s, 2 * s, 2 * s, 2 * s}, 5*s)
	if saved != 7*s || !strings.Contains(line, "saved 7s of wall time: the agent runs took 12s in sum, the loop 5s (2.4× faster)") {
		t.Fatalf("saved %v %q", saved, line)
	}
	if saved, line := parallelSaving([]time.Duration{-5 * s, 3 * s}, 0); saved != 0 || line != "" {
		t.Fatalf("no wall time: %v %q", saved, line)
	}
}

func TestRunReserve(t *testing.T) {
	for _, c := range []struct {
		max, cost float64
		builds    int
		want      float64
	}{
		{2, 9, 3, 2},  // the CLI's own cap
		{0, 9, 3, 3},  // the mean so far
		{0, 0, 0, 0},  // nothing known
		{0, 5, 0, 0},  // cost without a build run (plan runs only)
		{0, -1, 2, 0}, // never negative
		{0.5, 0, 0, .5},
	} {
		if got := runReserve(c.max, c.cost, c.builds); got != c.want {
			t.Errorf("runReserve(%v, %v, %d) = %v, want %v", c.max, c.cost, c.builds, got, c.want)
		}
	}
}

// TestPickWaveUnknownReserve: no build run ended yet and no cap: the
// reserve is unknown, so a cost budget starts the first run only; without
// one, all.
func TestPickWaveUnknownReserve(t *testing.T) {
	p := pairsPlan()
	cases := []struct {
		name     string
		inFlight []string
		b        waveBudget
		want     string
	}{
		{"an unknown reserve starts the first only", nil, waveBudget{IterationsLeft: 30, CostLeft: 25, Unknown: true}, "T-001"},
		{"an unknown reserve with a run in flight starts none", []string{"T-005"}, waveBudget{IterationsLeft: 30, CostLeft: 25, Unknown: true}, ""},
		{"no cost budget needs no reserve", nil, waveBudget{IterationsLeft: 30, CostLeft: math.Inf(1), Unknown: true}, "T-001,T-003,T-005"},
		{"a known free run reserves nothing", nil, waveBudget{IterationsLeft: 30, CostLeft: 0.01}, "T-001,T-003,T-005"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fl := map[string]bool{}
			for _, id := range c.inFlight {
				fl[id] = true
			}
			if got := waveIDs(pickWave(p, fl, 3, c.b)); got != c.want {
				t.Fatalf("wave %q, want %q", got, c.want)
			}
		})
	}
}
