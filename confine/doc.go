// Package confine is what an agent run sees and may write, below the
// engine and testable without it: the sandbox policy of a run (policy.go),
// what it sees of the machine (view.go), the copy-on-write layers' names
// and the tree a layer leaves (layer.go), the apply of a run's layer and
// the judging of what a run changed in place (apply.go: Applier), the
// private HOME where no layer can be made (home.go), the repository's
// control files around a Landlock run (gitguard.go), the loop's network
// (network.go), the secrets in a change and other loops' secrets in reach
// (secrets.go), the special files an apply leaves out (special.go) and the
// paths a failed run could not see (outside_view.go); a run's confinement
// put together from these parts (run.go: ForRun), the violation record of
// a refused change (violation.go), and what a run leaves behind: its
// cgroup, the sweep, a crashed engine's orphans (procs.go). The engine
// composes it (loop/trust.go, loop/layer.go).
package confine
