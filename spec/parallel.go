package spec

import "fmt"

// MaxParallel bounds `parallel:`.
const MaxParallel = 16

// ParallelAvailable says whether this version runs build runs at once:
// it does under bubblewrap with copy-on-write layers (the default sandbox
// where the machine allows it); elsewhere builds run one at a time, and
// ParallelWarning says so.
const ParallelAvailable = true

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
	case !ParallelAvailable:
		return fmt.Sprintf("parallel: %d: this version runs build runs one at a time: running them at once needs each run confined to a copy-on-write layer of its own (bubblewrap), with its own protected-file watch and budget reservation, which the engine does not keep per run yet; set parallel: 1 or remove it. A plan's depends_on already orders the tasks", n)
	}
	return ""
}

// ParallelWarning says why a loop's `parallel:` above 1 runs its builds
// one at a time under the sandbox kind in force ("" when it does not, or
// when layered is true: bubblewrap with copy-on-write layers).
func (l *Loop) ParallelWarning(kind string, layered bool) string {
	if l.Parallel < 2 || l.Shape != ShapeCycle || (kind == "bwrap" && layered) {
		return ""
	}
	what := "sandbox " + kind
	if kind == "bwrap" {
		what = "bwrap without copy-on-write layers on this machine"
	}
	return fmt.Sprintf("parallel: %d: build runs run one at a time here: %s gives no run a copy-on-write layer of its own to work in apart from the others (only bubblewrap with layers does)", l.Parallel, what)
}
