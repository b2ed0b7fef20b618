package loop

import (
	"fmt"
	"math"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// Parallel build runs (wave_run.go): which ready tasks a wave starts,
// within the free slots and the budgets, and the layer of each slot.

// waveBudget is what the budgets leave for the runs of a wave.
type waveBudget struct {
	// IterationsLeft is the build runs the iteration budget still allows,
	// not counting the runs in flight (each was counted when it started).
	IterationsLeft int
	// CostLeft is the cost budget less what was spent; PerRun the reserve
	// of one run (its agent's max_budget_usd where set, else the mean cost
	// of the loop's build runs so far, else 0).
	CostLeft, PerRun float64
	// Unknown says PerRun is not known yet: the agent does not cap its own
	// cost and no build run of the loop has ended (a plan run's cost says
	// nothing of a build's). Then a wave starts its first run only: a cost
	// budget is never wagered on a guess.
	Unknown bool
}

// runReserve is what a run reserves of the cost budget while it runs:
// its agent's max_budget_usd where set (a cap the CLI itself holds), else
// the mean cost of the loop's build runs so far, else 0 (nothing known yet:
// the first runs are decided as a single run is).
func runReserve(maxBudgetUSD, buildCostUSD float64, builds int) float64 {
	switch {
	case maxBudgetUSD > 0:
		return maxBudgetUSD
	case builds > 0 && buildCostUSD > 0:
		return buildCostUSD / float64(builds)
	}
	return 0
}

// pickWave lists, in plan order, the ready tasks to start now: none already
// in flight, at most the free slots, at most the runs the iteration budget
// allows, and past the first run in flight only runs whose reserve the cost
// budget still covers with every run in flight reserved (and only when
// that reserve is known: not b.Unknown, or no cost budget). With nothing in
// flight its first pick is the task Plan.Next names and it is started as
// today: the budgets decide it as they decide any single run (runAgent).
func pickWave(p *Plan, inFlight map[string]bool, slots int, b waveBudget) []Task {
	running := len(inFlight)
	var out []Task
	for _, t := range p.Ready() {
		if inFlight[t.ID] {
			continue
		}
		if running >= slots || b.IterationsLeft-len(out) <= 0 {
			break
		}
		if running > 0 && (b.CostLeft-float64(running+1)*b.PerRun < 0 || b.Unknown && !math.IsInf(b.CostLeft, 1)) {
			break
		}
		out = append(out, t)
		running++
	}
	return out
}

// slotLayerName is the name of the loop folder's layer of a run in slot k
// (0-based): slot 0 keeps today's "loop", so that a loop with parallel: 1
// and its resume after a crash find their layer where they always did.
func slotLayerName(k int) string {
	if k <= 0 {
		return "loop"
	}
	return fmt.Sprintf("loop-%d", k+1)
}

// slotLayer is the layer over the loop folder of the run in slot k, and
// the journal of its apply.
func slotLayer(dir string, k int) (sandbox.Layer, string) {
	name := slotLayerName(k)
	return layerOf(dir, name, dir), loopdir.PrivateOf(dir).LayerJournal(name)
}

// parallelSaving is the wall time running build runs at once saved: the
// sum of the loop's agent run times less the loop's wall time, and the
// line the report shows for it ("" when nothing was saved: runs one at a
// time never overlap, so their sum never exceeds the wall time).
func parallelSaving(runs []time.Duration, wall time.Duration) (time.Duration, string) {
	var sum time.Duration
	for _, d := range runs {
		if d > 0 {
			sum += d
		}
	}
	saved := sum - wall
	if wall <= 0 || saved <= 0 {
		return 0, ""
	}
	return saved, fmt.Sprintf("running builds at once saved %s of wall time: the agent runs took %s in sum, the loop %s (%.1f× faster)",
		saved.Round(time.Second), sum.Round(time.Second), wall.Round(time.Second), float64(sum)/float64(wall))
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
