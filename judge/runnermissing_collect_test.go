package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A baseline check whose runner could not collect its tests stops the loop
// with what to do, unless what it missed is what the objective says to
// write (a module, a test file) or the objective is to write tests.
func TestRunnerCannotStartNotCollected(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src", "mylib"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "mylib", "__init__.py"), nil, 0o644)
	log := func(body string) string {
		p := filepath.Join(t.TempDir(), "check.log")
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	own, _ := os.ReadFile(filepath.Join("..", "checkcmd", "testdata", "collect", "pytest-conftest-own.txt"))
	for _, tc := range []struct {
		objective, out string
		exit           int
		want           string
	}{
		{"fix mylib's add", string(own), 4, "the check `c` could not collect its tests (exit 4): the project's own package mylib cannot be imported"},
		{"the tests pass", "=== test session starts ===\nE   ModuleNotFoundError: No module named 'calc'\n!!! Interrupted: 1 error during collection !!!\n", 2, "No module named 'calc'"},
		{"write the calc module", "=== test session starts ===\nE   ModuleNotFoundError: No module named 'calc'\n", 2, ""},
		{"write calc.ops", "=== test session starts ===\nE   ModuleNotFoundError: No module named 'calc.ops'\n", 2, ""},
		{"the tests pass", "ERROR: file or directory not found: tests/test_new.py\n", 4, "file or directory not found: tests/test_new.py"},
		{"create tests/test_new.py", "ERROR: file or directory not found: tests/test_new.py\n", 4, ""},
		{"make test_new.py pass", "ERROR: file or directory not found: tests/test_new.py\n", 4, ""},
		{"the tests pass", "No tests found, exiting with code 1\n", 1, "the runner found no tests"},
		{"write tests for parse", "No tests found, exiting with code 1\n", 1, ""},
		{"the tests pass", "--- FAIL: TestX\n", 1, ""},
	} {
		l := &spec.Loop{Dir: dir, Objective: tc.objective}
		j := &Judge{Dir: dir, Spec: func() *spec.Loop { return l }}
		r := CheckResult{}
		r.Command, r.ExitCode, r.Output = "c", tc.exit, log(tc.out)
		got := j.RunnerCannotStart([]CheckResult{r})
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q / %q: %q, want %q", tc.objective, tc.out, got, tc.want)
		}
		if got != "" && !strings.Contains(got, "cannot start or collect its tests") {
			t.Errorf("no closing sentence: %q", got)
		}
	}
}
