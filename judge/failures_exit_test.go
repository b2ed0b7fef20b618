package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/testcount"
)

// mocha exits with its count of failing tests: 126 or 127 failing tests
// end it with the shell's "cannot execute" and "not found" statuses. A
// check whose output counts exactly that many failing tests ran them: the
// baseline does not stop it as a check that cannot run or a runner that
// cannot start. One failing test fewer or more, or none counted, and the
// status is the shell's again.
func TestFailuresAsExitCode(t *testing.T) {
	dir := t.TempDir()
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"c"}})
	rj := &Judge{Dir: dir, Spec: func() *spec.Loop { return &spec.Loop{Dir: dir, Objective: "the tests pass"} }}
	for _, tc := range []struct {
		exit, failed int
		blocks       bool
	}{
		{127, 127, false},
		{126, 126, false},
		{127, 126, true},
		{126, 127, true},
		{127, 0, true},
		{127, 128, true},
	} {
		r := result("c", tc.exit)
		r.Tests = testcount.Counts{Runner: "mocha", Known: true, Passed: 3, Failed: tc.failed}
		log := filepath.Join(dir, "out.log")
		if err := os.WriteFile(log, []byte("  3 passing (4ms)\n  127 failing\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.Output = log
		cannot := j.CannotRun([]CheckResult{r})
		if (cannot != "") != tc.blocks || tc.blocks && !strings.Contains(cannot, "cannot run") {
			t.Errorf("exit %d, %d failing: CannotRun %q, want blocking %v", tc.exit, tc.failed, cannot, tc.blocks)
		}
		start := rj.RunnerCannotStart([]CheckResult{r})
		if tc.exit == 127 && (start != "") != tc.blocks {
			t.Errorf("exit %d, %d failing: RunnerCannotStart %q, want blocking %v", tc.exit, tc.failed, start, tc.blocks)
		}
		if tc.exit == 126 && start != "" {
			t.Errorf("exit 126: RunnerCannotStart %q", start)
		}
	}
}
