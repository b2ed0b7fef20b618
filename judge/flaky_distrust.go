package judge

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/spec"
)

// distrustFlaky, under flaky: fail (the default), fails every pass of a
// check seen flaky before on this loop: a flip was seen, so a later pass
// (on that tree or any other: a comment changes the tree, not the test) is
// a lucky one, and the loop never ends DONE on it. A person makes the test
// deterministic or chooses another policy (rerun N, quarantine). Under
// rerun N the gate's N runs after the flip decide (rerunFlaky).
func (j *Judge) distrustFlaky(gate string, results []CheckResult) {
	if mode, _ := j.spec().FlakyRule(); mode != spec.FlakyFail || !judgingGate(gate) {
		return
	}
	known := j.flakyKnown()
	for i := range results {
		r := &results[i]
		tests, ok := known[r.Command]
		if !r.Pass || !ok {
			continue
		}
		head := fmt.Sprintf("FLAKY: `%s` passed, but it was seen flaky before on this loop (tests that flipped on the same tree: %s): a later pass is a lucky one and never ends the loop DONE. %s", r.Command, orNone(tests), flakyAdvice(spec.FlakyFail, 0))
		r.Pass, r.Check.Pass = false, false
		r.Lines = append([]string{head}, r.Lines...)
		r.Signal = strings.TrimSpace(head + "\n" + r.Signal)
	}
}
