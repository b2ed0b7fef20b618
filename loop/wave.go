package loop

import (
	"time"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/wave"
)

// Parallel build runs (wave_run.go): which ready tasks a wave starts,
// within the free slots, the budgets and the tasks' declared files, is
// wave.Pick's; the layer of each slot is the engine's.

// waveBudget is what the budgets leave for the runs of a wave.
type waveBudget = wave.Budget

// runReserve is what a run reserves of the cost budget (wave.RunReserve).
func runReserve(maxBudgetUSD, buildCostUSD float64, builds int) float64 {
	return wave.RunReserve(maxBudgetUSD, buildCostUSD, builds)
}

// pickWave lists, in plan order, the ready tasks of p to start now
// (wave.Pick).
func pickWave(p *Plan, inFlight map[string]bool, slots int, b waveBudget) []Task {
	return wave.Pick(p.Ready(), inFlight, slots, b)
}

// slotLayerName is the name of the loop folder's layer of a run in slot k.
func slotLayerName(k int) string { return wave.SlotLayerName(k) }

// slotLayer is the layer over the loop folder of the run in slot k, and
// the journal of its apply.
func slotLayer(dir string, k int) (sandbox.Layer, string) {
	name := slotLayerName(k)
	return confine.LayerOf(dir, name, dir), loopdir.PrivateOf(dir).LayerJournal(name)
}

// parallelSaving is what running build runs at once saved (wave.Saving).
func parallelSaving(runs []time.Duration, wall time.Duration) (time.Duration, string) {
	return wave.Saving(runs, wall)
}

// ParallelSaving is the report's line on what running builds at once
// saved in a loop ("" when nothing was).
func ParallelSaving(st *State) string {
	if st == nil {
		return ""
	}
	_, line := parallelSaving([]time.Duration{time.Duration(st.AgentMS) * time.Millisecond}, time.Duration(st.WallMS)*time.Millisecond)
	return line
}

// WaveInFlight lists the build runs of a wave under way in st, in slot
// order (none when builds run one at a time).
func WaveInFlight(st *State) []*InFlight {
	if st == nil {
		return nil
	}
	var out []*InFlight
	for _, f := range append([]*InFlight{st.InFlight}, st.InFlightMore...) {
		if f != nil && f.Run != "" {
			out = append(out, f)
		}
	}
	return out
}
