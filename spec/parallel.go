package spec

import "fmt"

// MaxParallel bounds `parallel:`.
const MaxParallel = 16

// ParallelAvailable says whether this version runs build runs at once.
// Until it does, `parallel:` above 1 is refused by validation with the
// reason, rather than accepted and run one at a time in silence.
const ParallelAvailable = false

// parallelProblem says why the loop's `parallel:` cannot be run as written
// ("" when it can).
func (l *Loop) parallelProblem() string {
	n := l.Parallel
	switch {
	case n < 1:
		return fmt.Sprintf("parallel: %d: it must be at least 1 (1, the default, runs one build at a time)", n)
	case n > MaxParallel:
		return fmt.Sprintf("parallel: %d: at most %d build runs may run at once", n, MaxParallel)
	case n == 1:
		return ""
	case l.Shape != ShapeCycle:
		return fmt.Sprintf("parallel: %d: only the cycle shape runs build runs at once (over the plan's tasks whose depends_on have passed); the %s shape runs one agent at a time, so set parallel: 1 or remove it", n, l.Shape)
	case l.Sandbox != "auto" && l.Sandbox != "bwrap":
		return fmt.Sprintf("parallel: %d: sandbox: %s gives no run a copy-on-write layer of its own (only bwrap does), so build runs cannot run at once there; set parallel: 1 or remove it", n, l.Sandbox)
	case !ParallelAvailable:
		return fmt.Sprintf("parallel: %d: this version runs build runs one at a time: running them at once needs each run confined to a copy-on-write layer of its own (bubblewrap), with its own protected-file watch and budget reservation, which the engine does not keep per run yet; set parallel: 1 or remove it. A plan's depends_on already orders the tasks", n)
	}
	return ""
}
