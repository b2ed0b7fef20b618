// Package wave holds build runs at once (parallel: N) and best of N below
// the engine: a wave and a best-of as such (Wave, BestOf: in which order
// the runs start, run, are judged, applied and saved, over a Host the
// engine gives); which ready tasks a wave starts (Pick), within the free
// slots, the budgets and the tasks' declared files (touches); the slots'
// layers; the three-way merge of a run's layer against the runs applied
// before it (Merger, MergeText); and for a best-of, the size of an
// attempt's change (LayerChange), the attempt kept (PickBest, Keep), the
// failure when none passes (Failure) and the refs the others are kept on
// (CommitRef). It knows no engine: the engine (loop/) composes it and
// starts, judges and applies a run when its Host is asked to.
package wave

import (
	"fmt"
	"math"
	"time"

	"github.com/looprinter/looprinter/plan"
	"github.com/looprinter/looprinter/spec"
)

// Budget is what the budgets leave for the runs of a wave.
type Budget struct {
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

// RunReserve is what a run reserves of the cost budget while it runs:
// its agent's max_budget_usd where set (a cap the CLI itself holds), else
// the mean cost of the loop's build runs so far, else 0 (nothing known yet:
// the first runs are decided as a single run is).
func RunReserve(maxBudgetUSD, buildCostUSD float64, builds int) float64 {
	switch {
	case maxBudgetUSD > 0:
		return maxBudgetUSD
	case builds > 0 && buildCostUSD > 0:
		return buildCostUSD / float64(builds)
	}
	return 0
}

// Task is what Pick reads of a ready task: its id and the files it
// declared it touches (globs; none declared: it may touch anything).
type Task interface {
	TaskID() string
	TaskTouches() []string
}

// Pick lists, in the order given (plan order), the ready tasks to start
// now: none already in flight, at most the free slots, at most the runs
// the iteration budget allows, never two whose declared files overlap
// (Overlap), and past the first run in flight only runs whose reserve the
// cost budget still covers with every run in flight reserved (and only
// when that reserve is known: not b.Unknown, or no cost budget). With
// nothing in flight its first pick is the first ready task, decided by the
// budgets as any single run is.
func Pick[T Task](ready []T, inFlight map[string]bool, slots int, b Budget) []T {
	running := len(inFlight)
	var out []T
	for _, t := range ready {
		if inFlight[t.TaskID()] {
			continue
		}
		if running >= slots || b.IterationsLeft-len(out) <= 0 {
			break
		}
		if running > 0 && (b.CostLeft-float64(running+1)*b.PerRun < 0 || b.Unknown && !math.IsInf(b.CostLeft, 1)) {
			break
		}
		if overlapsAny(t, out) {
			continue // it runs in a later wave, on the tree this one leaves
		}
		out = append(out, t)
		running++
	}
	return out
}

// overlapsAny says whether t declares files one of the picked tasks
// declares too.
func overlapsAny[T Task](t T, picked []T) bool {
	for _, o := range picked {
		if plan.Overlap(t.TaskTouches(), o.TaskTouches()) {
			return true
		}
	}
	return false
}

// SlotLayerName is the name of the loop folder's layer of a run in slot k
// (0-based): slot 0 keeps "loop", so that a loop with parallel: 1 and its
// resume after a crash find their layer where they always did.
func SlotLayerName(k int) string {
	if k <= 0 {
		return "loop"
	}
	return fmt.Sprintf("loop-%d", k+1)
}

// Saving is the wall time running build runs at once saved: the sum of
// the loop's agent run times less the loop's wall time, and the line the
// report shows for it ("" when nothing was saved: runs one at a time never
// overlap, so their sum never exceeds the wall time).
func Saving(runs []time.Duration, wall time.Duration) (time.Duration, string) {
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

// AgentKey names an agent for limits and records: backend/model; for the
// command backend without a model, its program (two programs are two
// agents).
func AgentKey(a spec.Agent) string {
	m := a.Model
	if m == "" && a.Backend == "command" && a.Command != "" {
		return a.Backend + " (" + a.Command + ")"
	}
	if m == "" {
		m = "default"
	}
	return a.Backend + "/" + m
}
