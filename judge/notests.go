package judge

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/record"
)

// A check that exits 0 having run no test judged nothing: its runner's
// counts are readable and say that no test ran (testcount's NoTests: go
// test's "[no test files]" for every package, pytest's "no tests ran" under
// a forced 0, jest's --passWithNoTests, node's "pass 0", cargo's "running 0
// tests" for every binary). At the baseline it is a warning; in a gate that
// judges the work it is a NOT VERIFIED note, so the loop cannot end plain
// DONE on it, dropped once the check runs tests again. A check whose output
// has no readable counts is not judged here.

// ranNoTests says why r passed without running a test ("" when it did not).
func ranNoTests(r CheckResult) string {
	if !r.Pass || !r.Tests.NoTests {
		return ""
	}
	runner := r.Tests.Runner
	if runner == "" {
		runner = "go"
	}
	skipped := ""
	if r.Tests.Skipped > 0 {
		skipped = fmt.Sprintf(", %d skipped or deselected", r.Tests.Skipped)
	}
	return fmt.Sprintf("it exited 0 and its runner's counts (%s) say no test ran%s", runner, skipped)
}

// noTestsNote is the NOT VERIFIED note of a check that ran no tests.
func noTestsNote(command string) string {
	return fmt.Sprintf("the check `%s` ran no tests: its pass shows nothing about the work (write or select the tests it should run)", command)
}

// noteNoTests warns about the baseline's checks that ran no tests, and keeps
// the NOT VERIFIED note of each judging gate's check up to its last run.
func (j *Judge) noteNoTests(gate string, results []CheckResult) {
	for _, r := range results {
		why := ranNoTests(r)
		switch {
		case gate == "baseline":
			if why != "" {
				j.emit(record.Event{Event: record.Warning, Gate: gate, Kind: "no_tests_ran",
					Message: fmt.Sprintf("the check `%s` ran no tests: %s; while it runs none, the loop cannot end DONE on it (NOT VERIFIED)", r.Command, why)})
			}
		case !judgingGate(gate):
		case why != "":
			j.addNotVerified(noTestsNote(r.Command))
		case r.Pass:
			j.dropNotVerified(noTestsNote(r.Command))
		}
	}
}

// noTestsNoteCheck is the check a note of noTestsNote names.
func noTestsNoteCheck(note string) (string, bool) {
	rest, ok := strings.CutPrefix(note, "the check `")
	if !ok {
		return "", false
	}
	c, ok := strings.CutSuffix(rest, "` ran no tests: its pass shows nothing about the work (write or select the tests it should run)")
	return c, ok
}
