package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/testcount"
)

// newJudge is a judge of a fresh loop folder, with no engine: records go to
// the returned list.
func newJudge(t *testing.T, l *spec.Loop) (*Judge, *[]record.Event) {
	t.Helper()
	dir := t.TempDir()
	l.Dir = dir
	l.CheckTimeout = spec.Duration(time.Minute)
	var evs []record.Event
	j := &Judge{Dir: dir, Priv: t.TempDir(), Spec: func() *spec.Loop { return l },
		Emit:  func(ev record.Event) { evs = append(evs, ev) },
		Stamp: func() (int, int) { return 3, 7 }}
	return j, &evs
}

// The judge runs a real check on its own: the exit code is the verdict, the
// output is kept in the records' checks folder under the gate's name, and
// the check sees the loop folder and the cycle in its environment.
func TestJudgeRunsChecksWithoutAnEngine(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	cmds := []string{
		`test "$LOOPRINTER_DIR" = "$PWD" && test "$LOOPRINTER_CYCLE" = 3`,
		`echo "--- FAIL: TestParse"; echo "want 3, got 4"; exit 1`,
	}
	rs := j.RunChecks(context.Background(), "cycle", cmds)
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	if !rs[0].Pass {
		t.Errorf("the environment check failed: exit %d, %q", rs[0].ExitCode, rs[0].Signal)
	}
	if rs[1].Pass || rs[1].ExitCode != 1 || !strings.Contains(rs[1].Signal, "FAIL: TestParse") {
		t.Errorf("failing check: pass %v exit %d signal %q", rs[1].Pass, rs[1].ExitCode, rs[1].Signal)
	}
	if AllPass(rs) || FirstFailure(rs) != "`"+cmds[1]+"` exited 1" {
		t.Errorf("AllPass %v, FirstFailure %q", AllPass(rs), FirstFailure(rs))
	}
	if !strings.HasSuffix(rs[1].Output, "-c3-i7-cycle-2.log") || filepath.Dir(rs[1].Output) != loopdir.Dir(j.Dir).Checks() {
		t.Errorf("log at %s", rs[1].Output)
	}
	if data, err := os.ReadFile(rs[1].Output); err != nil || !strings.Contains(string(data), "want 3, got 4") {
		t.Errorf("log %q, %v", data, err)
	}
}

// A check that prints a pass and exits non-zero fails: only the exit code
// counts, whatever the output claims.
func TestJudgeTrustsTheExitCodeNotTheOutput(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	rs := j.RunChecks(context.Background(), "verify", []string{`echo PASS; echo "ok  	example.com/x	0.01s"; exit 3`})
	if rs[0].Pass || rs[0].ExitCode != 3 {
		t.Fatalf("pass %v exit %d", rs[0].Pass, rs[0].ExitCode)
	}
}

// The ratchet: fewer passing tests than the baseline fail the check, with a
// violation, even when the check itself exits 0 (tests deleted to pass).
func TestJudgeRatchetFailsWhenPassingTestsDrop(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{})
	base := CheckResult{Check: record.Check{Command: "go test ./..."}, Tests: testcount.Counts{Known: true, Runner: "go", Passed: 10}}
	j.SaveTestBase([]CheckResult{base}, false)
	now := CheckResult{Check: record.Check{Command: "go test ./...", Pass: true}, Tests: testcount.Counts{Known: true, Runner: "go", Passed: 4}}
	rs := []CheckResult{now}
	v := j.Ratchet("cycle", rs)
	if len(v) != 1 || rs[0].Pass || !strings.HasPrefix(rs[0].Signal, "VIOLATION") {
		t.Fatalf("violations %q, result %+v", v, rs[0])
	}
	if len(*evs) != 1 || (*evs)[0].Kind != "tests_dropped" {
		t.Errorf("records %+v", *evs)
	}
	// Raising keeps the higher count: a worse run never lowers the bar.
	j.SaveTestBase([]CheckResult{now}, true)
	rs = []CheckResult{now}
	if v := j.Ratchet("cycle", rs); len(v) != 1 {
		t.Errorf("the ratchet went down: %q", v)
	}
}

// The clean room: a check that passes only thanks to a file the agent
// added fails once that file is set aside, with a test_gaming violation;
// the loop folder itself is left as it was.
func TestJudgeCleanRoomSetsAsideWhatTheAgentAdded(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{})
	if err := os.WriteFile(filepath.Join(j.Dir, "conftest.sh"), []byte("exit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j.SetAside = func() ([]string, error) { return []string{"conftest.sh"}, nil }
	var ev []string
	j.AddEvidence = func(s string) { ev = append(ev, s) }
	cmd := "sh conftest.sh"
	if rs := j.RunChecks(context.Background(), "objective", []string{cmd}); !AllPass(rs) {
		t.Fatalf("the check fails in the loop folder: %+v", rs)
	}
	rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{cmd})
	if rec.Pass || !strings.Contains(signal, "set aside (conftest.sh)") {
		t.Fatalf("clean room pass %v, signal %q, error %q", rec.Pass, signal, rec.Error)
	}
	gaming := false
	for _, e := range *evs {
		gaming = gaming || (e.Event == record.Violation && e.Kind == "test_gaming" && e.File == "conftest.sh")
	}
	if !gaming {
		t.Errorf("no test_gaming violation in %+v", *evs)
	}
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "clean room: FAIL") {
		t.Errorf("evidence %q", ev)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, "conftest.sh")); err != nil {
		t.Errorf("the clean room touched the loop folder: %v", err)
	}
	// Without the list of what the loop started with, it fails closed.
	j.SetAside = nil
	if rec, _ := j.JudgeCleanRoom(context.Background(), "objective", []string{"true"}); rec.Pass {
		t.Error("a clean room that cannot be made passed")
	}
}

// Holdout files can be kept from the agent only under the layered sandbox,
// and must match files.
func TestJudgeHoldoutReady(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Holdout: []string{"hidden/*_test.go"}})
	if err := j.HoldoutReady(true); err == nil || !strings.Contains(err.Error(), "match no file") {
		t.Errorf("no holdout file: %v", err)
	}
	os.MkdirAll(filepath.Join(j.Dir, "hidden"), 0o755)
	os.WriteFile(filepath.Join(j.Dir, "hidden", "a_test.go"), []byte("package a\n"), 0o644)
	if err := j.HoldoutReady(false); err == nil || !strings.Contains(err.Error(), "layered sandbox") {
		t.Errorf("without layers: %v", err)
	}
	if got := j.Holdouts(); len(got) != 1 || got[0] != "hidden/a_test.go" {
		t.Errorf("holdouts %q", got)
	}
	if !j.IsHoldout("hidden/a_test.go") || j.IsHoldout("a_test.go") {
		t.Error("IsHoldout")
	}
	if !j.TouchesHoldout("hidden") || j.TouchesHoldout("other") {
		t.Error("TouchesHoldout")
	}
}

// A module the objective names as a word is the work's, not a runner's.
func TestNamesWord(t *testing.T) {
	for _, c := range []struct {
		text, word string
		want       bool
	}{
		{"write the calc module", "calc", true},
		{"calc: add and sub", "calc", true},
		{"fix calc.py", "calc", true},
		{"write a calculator", "calc", false},
		{"the my_calc tool", "calc", false},
		{"the tests pass", "nosuchrunner", false},
		{"anything", "", false},
		{"calcs and calc", "calc", true},
	} {
		if got := namesWord(c.text, c.word); got != c.want {
			t.Errorf("namesWord(%q, %q) = %v, want %v", c.text, c.word, got, c.want)
		}
	}
}
