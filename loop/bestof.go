package loop

import (
	"fmt"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Best of N (docs/design.md "Best of N"): a task's next build run is N
// runs at once, each on a layer of its own over the unchanged loop folder
// (a wave whose runs all carry the same task). What needs no engine (the
// size of an attempt's change, the attempt kept, the failure when none
// passes, the refs) is in wave/; bestof_run.go runs and judges the
// attempts.

// attemptsFor is how many attempts the next build run of task t gets
// (wave.AttemptsFor).
func attemptsFor(l *spec.Loop, t Task, failed, same int) int {
	return wave.AttemptsFor(l, t.Attempts, failed, same)
}

// spent is what the loop spent so far, as the waves read it.
func (s *State) spent() wave.Spent {
	return wave.Spent{Iterations: s.Iterations, AgentRuns: s.AgentRuns, BuildRuns: s.BuildRuns, CostUSD: s.CostUSD, BuildCostUSD: s.BuildCostUSD}
}

// attemptsOf is how many attempts task's next run gets here: attemptsFor,
// where build runs get a copy-on-write layer each (bubblewrap with layers);
// elsewhere 1 (validate says why).
func (r *runner) attemptsOf(t Task) int {
	l := r.spec()
	if l.Shape != spec.ShapeCycle {
		return 1
	}
	failed := r.st.TaskFails[r.st.taskKey(t.ID)]
	n := attemptsFor(l, t, failed, min(r.st.SameCount, failed))
	if n < 2 {
		return 1
	}
	if !r.layersInForce() {
		if key := r.st.taskKey(t.ID); !r.attemptsWarned[key] {
			if r.attemptsWarned == nil {
				r.attemptsWarned = map[string]bool{}
			}
			r.attemptsWarned[key] = true
			r.emit(record.Event{Event: record.Warning, Task: t.ID, Kind: "best_of_once",
				Message: fmt.Sprintf("%s asks for %d attempts at once; it runs once: only bubblewrap with copy-on-write layers gives each attempt a layer of its own", t.ID, n)})
		}
		return 1
	}
	return n
}

// taskKey names a task's runs in this cycle.
func (s *State) taskKey(task string) string { return fmt.Sprintf("c%d/%s", s.Cycle, task) }

// layersInForce says whether agent runs get a copy-on-write layer here
// (bubblewrap with layers): only then can runs work at once.
func (r *runner) layersInForce() bool {
	p, err := confine.Policy(r.spec(), nil)
	return err == nil && p.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil
}
