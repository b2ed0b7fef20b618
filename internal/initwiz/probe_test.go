package initwiz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/testcount"
)

// A Go module with only an objective gets `go test -v ./...` under both
// gates, and the summary says where it came from and why -v was added.
func TestDetectChecksSaysWhatItDid(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
	a := Defaults()
	a.Objective = "the tests pass"
	a.Clean()
	if !a.DetectChecks(dir, detect.System) {
		t.Fatal("nothing detected")
	}
	if len(a.Verify) != 1 || a.Verify[0] != "go test -v ./..." || len(a.ObjectiveVerify) != 1 || a.ObjectiveVerify[0] != "go test -v ./..." {
		t.Fatalf("verify %q objective_verify %q", a.Verify, a.ObjectiveVerify)
	}
	sum := a.Summary("loop.yaml")
	for _, want := range []string{"detected the test command `go test ./...` from go.mod", "`go test ./...` is written as `go test -v ./...`: plain `go test` prints no passing tests"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	// A check the user gave is kept; its -v is still said.
	b := Defaults()
	b.Objective, b.Verify = "x", []string{"go test ./calc"}
	b.Clean()
	if b.DetectChecks(dir, detect.System) || b.Verify[0] != "go test -v ./calc" || len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "is written as `go test -v ./calc`") {
		t.Fatalf("%q %q", b.Verify, b.Notes)
	}
	if w := strings.Join(Answers{Shape: "cycle", Example: "npm test"}.Weaknesses(), "\n"); !strings.Contains(w, `--verify "npm test"`) {
		t.Errorf("weakness names go test in a Node project: %s", w)
	}
}

func TestRanReport(t *testing.T) {
	counts, _ := testcount.ParseString("ok  \tx\t0.1s\n", nil)
	line, warns := RanReport(Ran{Command: "go test ./...", Exit: 0, Duration: 1234 * time.Millisecond, Tests: counts})
	if line != "ran `go test ./...` once: exit 0 in 1.2s" || len(warns) != 1 || !strings.Contains(warns[0], "add -v") {
		t.Errorf("%q %q", line, warns)
	}
	counts, _ = testcount.ParseString("===== 1 failed, 2 passed in 0.1s =====\n", nil)
	line, warns = RanReport(Ran{Command: "pytest", Exit: 1, Duration: time.Second, Tests: counts})
	if line != "ran `pytest` once: exit 1 in 1s; pytest: 2 passed, 1 failed, 0 skipped (counted, not named: -v or -rA would name each test, so that a dropped one is named); init leaves the check as it is: to have them named, pass --verify \"pytest -rA\" (or edit the loop file)" || len(warns) != 0 {
		t.Errorf("%q %q", line, warns)
	}
	_, warns = RanReport(Ran{Command: "python3 -m pytest", Exit: 1, Output: "/usr/bin/python3: No module named pytest\n"})
	if len(warns) != 1 || !strings.Contains(warns[0], "would stop BLOCKED") || !strings.Contains(warns[0], "pip install pytest") {
		t.Errorf("%q", warns)
	}
}
