package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RunnerMissing reads the genuine output of runners that could not start
// (testdata/missing/, recorded on Debian with Python 3.11, npm 11, Node 20)
// and leaves a test's own failure alone.
func TestRunnerMissing(t *testing.T) {
	for _, tc := range []struct {
		file    string
		exit    int
		missing bool
		hint    string
	}{
		{"python-m-pytest.txt", 1, true, "python3 -m pip install pytest"},
		{"npm-missing-script.txt", 1, true, `no "test" script`},
		{"npm-mocha-not-found.txt", 127, true, "mocha was not found: the project's dependencies are not installed; run npm ci"},
		{"bash-not-found.txt", 127, true, "jest was not found"},
		{"node-cannot-find-module.txt", 1, true, "the package chai is not installed"},
		// The project's own module that the work is to create: a failure of the work.
		{"unittest-project-module-missing.txt", 1, false, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "missing", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			missing, hint := RunnerMissing(string(b), tc.exit)
			if missing != tc.missing || !strings.Contains(hint, tc.hint) {
				t.Errorf("RunnerMissing = %v, %q; want %v, containing %q", missing, hint, tc.missing, tc.hint)
			}
			if missing, _ := RunnerMissing(string(b), 0); missing {
				t.Error("a check that passed has no missing runner")
			}
		})
	}
	// A test that prints a look-alike deep in its output is still a shell's line only at a line start.
	if m, _ := RunnerMissing("AssertionError: expected 'sh: 1: jest: not found' to equal ''", 1); m {
		t.Error("a quoted look-alike inside an assertion counted")
	}
}
