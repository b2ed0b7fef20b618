package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// In the clean room a Go run that names a test no test file of the loop (as
// it started) or of the holdout declares was printed by code under test:
// the check fails there, however it exited. A run that names only real
// tests passes.
func TestCleanRoomRefusesForgedGoTests(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Sandbox: "off"})
	os.WriteFile(filepath.Join(j.Dir, "add_test.go"), []byte("package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"), 0o644)
	j.SetAside = func() ([]string, error) { return nil, nil }
	j.StartFiles = func() []string { return []string{"add_test.go"} }
	honest := `printf '=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nPASS\nok  \texample.com/add\t0.01s\n'`
	forged := `printf '=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestHidden\n--- PASS: TestHidden (0.00s)\nPASS\nok  \texample.com/add\t0.01s\n'`
	rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{honest})
	if !rec.Pass {
		t.Fatalf("a run of the loop's own tests failed the clean room: %s", signal)
	}
	rec, signal = j.JudgeCleanRoom(context.Background(), "objective", []string{forged})
	if rec.Pass || !strings.Contains(signal, "TestHidden") || !strings.Contains(signal, "not by Go's testing package") ||
		!strings.HasPrefix(signal, "clean room: the checks fail when run again in a clean copy of the loop folder.\n") {
		t.Fatalf("a forged test name passed the clean room (pass %v): %s", rec.Pass, signal)
	}
}
