package judge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/testcount"
)

// These tests pin the judge's verdicts one decision at a time: which exit
// codes block a loop before any agent is paid, when the passing-count
// ratchet moves and when it fails a check, how the clean room's verdict and
// the holdout counts are made, and when holdout files count as kept from
// the agent.

func result(cmd string, exit int) CheckResult {
	var r CheckResult
	r.Command, r.Check.Command, r.ExitCode = cmd, cmd, exit
	r.Pass, r.Check.Pass = exit == 0, exit == 0
	return r
}

// Only 126 (not executable) and 127 (not found) mean a check cannot run;
// the key named in the fix is verify for a verify check, objective_verify
// for any other.
func TestPinCannotRunOnlyForExits126And127(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"v-check"}})
	if got := j.CannotRun([]CheckResult{result("a", 0), result("b", 1), result("c", 125), result("d", 128), result("e", 2)}); got != "" {
		t.Fatalf("checks that ran (exits 0, 1, 125, 128, 2) block the loop: %q", got)
	}
	if got := j.CannotRun(nil); got != "" {
		t.Fatalf("no results: %q", got)
	}
	got := j.CannotRun([]CheckResult{result("v-check", 127), result("ok", 0), result("o-check", 126)})
	lines := strings.Split(got, "\n")
	if len(lines) != 5 {
		t.Fatalf("message %q: want two checks, each with its fix, and the closing line", got)
	}
	if !strings.HasPrefix(lines[0], "the check `v-check` cannot run: the check could not run") ||
		!strings.HasPrefix(lines[1], "fix: ") || !strings.Contains(lines[1], "under verify:") {
		t.Errorf("verify check: %q", lines[:2])
	}
	if !strings.HasPrefix(lines[2], "the check `o-check` cannot run: ") ||
		!strings.HasPrefix(lines[3], "fix: ") || !strings.Contains(lines[3], "under objective_verify:") {
		t.Errorf("objective check: %q", lines[2:4])
	}
	if lines[4] != "(no agent ran: a check that cannot run cannot judge one)" {
		t.Errorf("closing line %q", lines[4])
	}
}

func counts(passed, skipped int) testcount.Counts {
	return testcount.Counts{Known: true, Runner: "go", Passed: passed, Skipped: skipped}
}

func withTests(cmd string, c testcount.Counts) CheckResult {
	r := result(cmd, 0)
	r.Tests = c
	return r
}

// The stored baseline only goes up when raised: fewer passing or more
// skipped tests never replace it; equal or better ones do; results whose
// tests could not be read are never stored; nothing changed, nothing
// written.
func TestPinSaveTestBaseRaisesOnly(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	writes := 0
	j.WriteFile = func(path string, data []byte) error { writes++; return os.WriteFile(path, data, 0o600) }
	j.SaveTestBase([]CheckResult{result("unread", 0)}, false)
	if writes != 0 {
		t.Fatalf("a result without test counts was written (%d writes)", writes)
	}
	if _, err := os.Stat(loopdir.Private(j.Priv).TestsBaseline()); err == nil {
		t.Fatal("a baseline file exists with nothing to store")
	}
	j.SaveTestBase([]CheckResult{withTests("a", counts(10, 2)), withTests("b", counts(5, 0))}, false)
	if writes != 1 {
		t.Fatalf("%d writes, want 1", writes)
	}
	for _, c := range []struct {
		name string
		now  testcount.Counts
		want testcount.Counts
	}{
		{"fewer passing", counts(9, 2), counts(10, 2)},
		{"more skipped", counts(10, 3), counts(10, 2)},
		{"more passing, more skipped", counts(11, 3), counts(10, 2)},
		{"same", testcount.Counts{Known: true, Runner: "go", Passed: 10, Skipped: 2, Failed: 1}, testcount.Counts{Known: true, Runner: "go", Passed: 10, Skipped: 2, Failed: 1}},
		{"more passing", counts(12, 2), counts(12, 2)},
		{"fewer skipped", counts(12, 0), counts(12, 0)},
	} {
		j.SaveTestBase([]CheckResult{withTests("a", c.now)}, true)
		if got := j.loadTestBase()["a"]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: raised to %+v, want %+v", c.name, got, c.want)
		}
	}
	// Not raising (the baseline itself) stores what ran, lower or not.
	j.SaveTestBase([]CheckResult{withTests("a", counts(1, 5))}, false)
	if got := j.loadTestBase()["a"]; !reflect.DeepEqual(got, counts(1, 5)) {
		t.Errorf("baseline stored %+v", got)
	}
	// A new command is stored when raising too.
	j.SaveTestBase([]CheckResult{withTests("c", counts(3, 0))}, true)
	if got := j.loadTestBase(); !reflect.DeepEqual(got["c"], counts(3, 0)) || !reflect.DeepEqual(got["b"], counts(5, 0)) {
		t.Errorf("baseline %+v", got)
	}
	// A raise that changes nothing writes nothing.
	n := writes
	j.SaveTestBase([]CheckResult{withTests("c", counts(2, 0))}, true)
	if writes != n {
		t.Errorf("a refused raise wrote the baseline")
	}
}

// The ratchet fails exactly the checks that got worse than their stored
// counts, and marks the failure in every place a reader looks.
func TestPinRatchetFailsOnlyWorseChecks(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{})
	j.SaveTestBase([]CheckResult{withTests("same", counts(4, 1)), withTests("skips", counts(4, 1)), withTests("gone", counts(4, 0))}, false)
	skips := withTests("skips", counts(4, 2))
	skips.Signal, skips.Lines = "old signal", []string{"old line"}
	gone := result("gone", 0) // its output no longer shows test counts
	rs := []CheckResult{withTests("same", counts(4, 1)), skips, withTests("unknown", counts(0, 0)), gone}
	v := j.Ratchet("objective", rs)
	if len(v) != 2 || !strings.HasPrefix(v[0], "VIOLATION: `skips`: skipped tests rose from 1 to 2") || !strings.HasPrefix(v[1], "VIOLATION: `gone`: no test results") {
		t.Fatalf("violations %q", v)
	}
	if !rs[0].Pass || !rs[0].Check.Pass || !rs[2].Pass || !rs[2].Check.Pass {
		t.Errorf("a check no worse than its baseline, or without one, failed: %+v %+v", rs[0], rs[2])
	}
	r := rs[1]
	if r.Pass || r.Check.Pass {
		t.Errorf("the worse check still passes: %+v", r)
	}
	if r.Signal != "VIOLATION: skipped tests rose from 1 to 2\nold signal" {
		t.Errorf("signal %q", r.Signal)
	}
	if len(r.Lines) != 2 || r.Lines[0] != "VIOLATION: skipped tests rose from 1 to 2" || r.Lines[1] != "old line" {
		t.Errorf("lines %q", r.Lines)
	}
	if rs[3].Pass || rs[3].Check.Pass {
		t.Errorf("a check whose counts vanished passes")
	}
	if len(*evs) != 2 || (*evs)[0].Gate != "objective" || (*evs)[0].Event != record.Violation || (*evs)[0].Kind != "tests_dropped" ||
		(*evs)[0].Message != "`skips`: skipped tests rose from 1 to 2" {
		t.Errorf("records %+v", *evs)
	}
}

// The holdout checks are counted by test when every one's runner printed
// its counts (a failure with no failing test counts once), by command
// otherwise.
func TestPinHoldoutCounts(t *testing.T) {
	tests := func(cmd string, exit, passed, failed int) CheckResult {
		r := result(cmd, exit)
		r.Tests = testcount.Counts{Known: true, Passed: passed, Failed: failed}
		return r
	}
	for _, c := range []struct {
		name           string
		rs             []CheckResult
		passed, failed int
		byTests        bool
	}{
		{"none", nil, 0, 0, false},
		{"by test", []CheckResult{tests("a", 0, 3, 0), tests("b", 1, 2, 2)}, 5, 2, true},
		{"failed without a failing test", []CheckResult{tests("a", 0, 3, 0), tests("b", 2, 1, 0)}, 4, 1, true},
		{"one without counts", []CheckResult{tests("a", 0, 3, 0), result("b", 1), result("c", 0)}, 2, 1, false},
		{"by command", []CheckResult{result("a", 1), result("b", 1), result("c", 0)}, 1, 2, false},
	} {
		p, f, bt := holdoutCounts(c.rs)
		if p != c.passed || f != c.failed || bt != c.byTests {
			t.Errorf("%s: %d passed, %d failed, by tests %v; want %d, %d, %v", c.name, p, f, bt, c.passed, c.failed, c.byTests)
		}
	}
}

// What a failing holdout check tells the next prompt: a count by default,
// the failing commands with names, their failure with full.
func TestPinHoldoutSignal(t *testing.T) {
	fail := result("hold-b", 1)
	fail.Signal, fail.Lines = "secret failure line", []string{"secret failure line"}
	cr := cleanRoomResult{rec: record.CleanRoom{HoldoutPassed: 1, HoldoutFailed: 2}, holdout: []CheckResult{result("hold-a", 0), fail, result("hold-c", 3)}}
	head := "2 of 3 holdout checks fail: the work is not done"
	for _, c := range []struct {
		feedback string
		has      []string
		not      []string
	}{
		{"", []string{head}, []string{"hold-", "secret"}},
		{"count", []string{head}, []string{"hold-", "secret"}},
		{"names", []string{head, "\nfailing: `hold-b`, `hold-c`"}, []string{"hold-a", "secret"}},
		{"full", []string{head, "secret failure line"}, nil},
	} {
		j, _ := newJudge(t, &spec.Loop{HoldoutFeedback: c.feedback})
		got := j.holdoutSignal(cr)
		if !strings.HasPrefix(got, head) {
			t.Errorf("%q: %q", c.feedback, got)
		}
		for _, s := range c.has {
			if !strings.Contains(got, s) {
				t.Errorf("%q: %q lacks %q", c.feedback, got, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(got, s) {
				t.Errorf("%q: %q tells %q", c.feedback, got, s)
			}
		}
	}
}

// The clean room's verdict: a pass is evidence and no signal; checks that
// fail again with nothing set aside fail without a violation; failing
// holdout checks fail a gate whose own checks pass; one test_gaming
// violation however many checks fail, naming the first file set aside.
func TestPinCleanRoomVerdict(t *testing.T) {
	j, evs := newJudge(t, &spec.Loop{})
	var ev []string
	j.AddEvidence = func(s string) { ev = append(ev, s) }
	j.SetAside = func() ([]string, error) { return nil, nil }
	rec, signal := j.JudgeCleanRoom(context.Background(), "objective", []string{"true"})
	if !rec.Pass || signal != "" || rec.Error != "" || len(ev) != 1 || ev[0] != "clean room: pass" {
		t.Fatalf("a passing clean room: %+v, signal %q, evidence %q", rec, signal, ev)
	}

	ev = nil
	// With nothing set aside and nothing of the tree made pristine, a gate
	// that passed in the folder and fails in the room is flaky: a flaky
	// record, no violation.
	rec, signal = j.JudgeCleanRoom(context.Background(), "objective", []string{"exit 1"})
	if rec.Pass || !strings.HasPrefix(signal, "clean room: FLAKY: the checks passed in the loop folder") ||
		strings.Contains(signal, "holdout") || len(*evs) != 1 || (*evs)[0].Event != record.Flaky {
		t.Fatalf("failing again: %+v, signal %q, records %+v", rec, signal, *evs)
	}
	if len(ev) != 2 || ev[len(ev)-1] != "clean room: FAIL" || !strings.Contains(ev[0], "FLAKY `exit 1`") {
		t.Errorf("evidence %q", ev)
	}
	*evs = nil

	// The gate's checks pass; a holdout check fails.
	hj, hevs := newJudge(t, &spec.Loop{HoldoutVerify: []string{"true", "exit 1"}})
	hj.SetAside = func() ([]string, error) { return nil, nil }
	rec, signal = hj.JudgeCleanRoom(context.Background(), "objective", []string{"true"})
	if rec.Pass || rec.HoldoutPassed != 1 || rec.HoldoutFailed != 1 || rec.HoldoutOfTests {
		t.Fatalf("holdout: %+v", rec)
	}
	if !strings.HasPrefix(signal, "1 of 2 holdout checks fail") || strings.Contains(signal, "clean copy") || len(*hevs) != 0 {
		t.Errorf("holdout signal %q, records %+v", signal, *hevs)
	}
	// Holdout checks that all pass do not fail the gate.
	hj.Spec().HoldoutVerify = []string{"true"}
	if rec, signal = hj.JudgeCleanRoom(context.Background(), "objective", []string{"true"}); !rec.Pass || signal != "" || rec.HoldoutPassed != 1 {
		t.Errorf("passing holdout: %+v, %q", rec, signal)
	}

	// Two failing checks, two files set aside: one violation.
	for _, f := range []string{"a_test.sh", "b_test.sh"} {
		os.WriteFile(filepath.Join(j.Dir, f), []byte("exit 0\n"), 0o644)
	}
	j.SetAside = func() ([]string, error) { return []string{"a_test.sh", "b_test.sh"}, nil }
	rec, signal = j.JudgeCleanRoom(context.Background(), "final", []string{"sh a_test.sh", "sh b_test.sh"})
	if rec.Pass || !strings.Contains(signal, "set aside (a_test.sh, b_test.sh)") {
		t.Fatalf("set aside: %+v, %q", rec, signal)
	}
	if len(*evs) != 1 || (*evs)[0].Kind != "test_gaming" || (*evs)[0].Gate != "final" || (*evs)[0].File != "a_test.sh" ||
		!strings.HasPrefix((*evs)[0].Message, "`sh a_test.sh` passes with the files the agent added (a_test.sh, b_test.sh)") {
		t.Errorf("records %+v", *evs)
	}

	// A clean room that cannot be made fails with its reason first.
	*evs = nil
	j.SetAside = func() ([]string, error) { return nil, os.ErrPermission }
	rec, signal = j.JudgeCleanRoom(context.Background(), "objective", []string{"true"})
	if rec.Pass || !strings.HasPrefix(signal, "clean room: the clean room cannot be made: ") || len(*evs) != 0 {
		t.Errorf("cannot be made: %+v, %q, %+v", rec, signal, *evs)
	}

	// A loop being stopped: no verdict is given on what was cut short.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.SetAside = func() ([]string, error) { return nil, nil }
	if _, signal = j.JudgeCleanRoom(ctx, "objective", []string{"exit 1"}); signal != "" {
		t.Errorf("a cancelled clean room gave a signal: %q", signal)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// Holdout files are found once, each once, sorted, whatever globs name
// them; they are kept from the agent only if git neither tracks them nor
// has them in its history, and ignores them.
func TestPinHoldoutReadyWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	j, _ := newJudge(t, &spec.Loop{Holdout: []string{"./hidden/*_test.go", "hidden/b_test.go", "hidden/a_*.go"}})
	os.MkdirAll(filepath.Join(j.Dir, "hidden"), 0o755)
	for _, f := range []string{"b_test.go", "a_test.go"} {
		os.WriteFile(filepath.Join(j.Dir, "hidden", f), []byte("package h\n"), 0o644)
	}
	// Git looks no higher than the test's own folders, wherever the
	// temporary folder is.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(filepath.Dir(j.Dir)))
	// No git: nothing to check.
	if err := j.HoldoutReady(true); err != nil {
		t.Fatalf("outside git: %v", err)
	}
	if got := j.Holdouts(); !reflect.DeepEqual(got, []string{"hidden/a_test.go", "hidden/b_test.go"}) {
		t.Fatalf("holdouts %q", got)
	}

	j2, _ := newJudge(t, &spec.Loop{Holdout: []string{"hidden/*_test.go"}})
	os.MkdirAll(filepath.Join(j2.Dir, "hidden"), 0o755)
	os.WriteFile(filepath.Join(j2.Dir, "hidden", "a_test.go"), []byte("package h\n"), 0o644)
	os.WriteFile(filepath.Join(j2.Dir, "hidden", "b_test.go"), []byte("package h\n"), 0o644)
	git(t, j2.Dir, "init", "-q")
	if err := j2.HoldoutReady(true); err == nil || !strings.Contains(err.Error(), "holdout file hidden/a_test.go is not ignored by git") {
		t.Fatalf("not ignored: %v", err)
	}
	os.WriteFile(filepath.Join(j2.Dir, ".gitignore"), []byte("hidden/a_test.go\n"), 0o644)
	if err := j2.HoldoutReady(true); err == nil || !strings.Contains(err.Error(), "hidden/b_test.go is not ignored") {
		t.Fatalf("one not ignored: %v", err)
	}
	// A holdout file git holds can be set aside: the agent then sees no
	// repository at all.
	git(t, j2.Dir, "add", "-f", "hidden/b_test.go")
	if err := j2.HoldoutReady(true); err != nil || j2.HiddenGit() == nil {
		t.Fatalf("staged: %v, the repository hidden: %v", err, j2.HiddenGit() != nil)
	}
	git(t, j2.Dir, "commit", "-qm", "b")
	git(t, j2.Dir, "rm", "-q", "--cached", "hidden/b_test.go")
	git(t, j2.Dir, "commit", "-qm", "no b")
	if got := HoldoutTracked(j2.Dir, []string{"hidden/a_test.go", "hidden/b_test.go"}); !reflect.DeepEqual(got, []string{"hidden/b_test.go"}) {
		t.Fatalf("in history: %q", got)
	}
	if HoldoutTracked(t.TempDir(), []string{"x"}) != nil {
		t.Error("outside git something is tracked")
	}
	// A fresh repository where both are ignored: ready, and checked once.
	os.RemoveAll(filepath.Join(j2.Dir, ".git"))
	git(t, j2.Dir, "init", "-q")
	os.WriteFile(filepath.Join(j2.Dir, ".gitignore"), []byte("hidden/\n"), 0o644)
	if err := j2.HoldoutReady(true); err != nil {
		t.Fatalf("ignored: %v", err)
	}
	os.WriteFile(filepath.Join(j2.Dir, ".gitignore"), nil, 0o644)
	if err := j2.HoldoutReady(true); err != nil {
		t.Errorf("checked again after a pass: %v", err)
	}
	if err := j2.HoldoutReady(false); err == nil {
		t.Error("the layer is required every time")
	}
}

// A bad glob is an error naming it; a loop with no holdout has none.
func TestPinHoldoutFilesErrors(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Holdout: []string{"[bad"}})
	if err := j.HoldoutReady(true); err == nil || !strings.Contains(err.Error(), `"[bad"`) {
		t.Errorf("bad glob: %v", err)
	}
	j, _ = newJudge(t, &spec.Loop{})
	if err := j.HoldoutReady(false); err != nil || j.Holdouts() != nil {
		t.Errorf("no holdout: %v %q", err, j.Holdouts())
	}
}

// A path of the agent's layer touches a holdout file when it is the file,
// or a folder on its way that is not a plain folder of the layer.
func TestPinHoldoutPath(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	j.holdouts = []string{"a/b/h_test.go", "top_test.go"}
	upper := t.TempDir()
	os.MkdirAll(filepath.Join(upper, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(upper, "x"), nil, 0o644)
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"top_test.go", true},
		{"a/b/h_test.go", true},
		{"a", false},     // a plain folder
		{"a/b", false},   // a plain folder
		{"x", false},     // unrelated
		{"a/bb", false},  // a sibling that shares a prefix
		{"a/b/h", false}, // a prefix of the name, not a folder on the way
	} {
		if got := j.HoldoutPath(upper, c.rel); got != c.want {
			t.Errorf("HoldoutPath(%q) = %v", c.rel, got)
		}
	}
	// A folder on the way that is gone from the layer (removed) or a file
	// (replaced) touches it.
	os.RemoveAll(filepath.Join(upper, "a", "b"))
	os.WriteFile(filepath.Join(upper, "a", "b"), nil, 0o644)
	if !j.HoldoutPath(upper, "a/b") {
		t.Error("a folder replaced by a file")
	}
	if !j.HoldoutPath(t.TempDir(), "a") {
		t.Error("a folder missing from the layer")
	}
	for _, c := range []struct {
		rel  string
		want bool
	}{{"top_test.go", true}, {"a", true}, {"a/b/h_test.go/x", true}, {"a/bb", false}, {"top_test.go2", false}, {"b", false}} {
		if got := j.TouchesHoldout(c.rel); got != c.want {
			t.Errorf("TouchesHoldout(%q) = %v", c.rel, got)
		}
	}
}

// Checks whose output the agent sees run without the holdout files; where
// that cannot be done they fail, never pass.
func TestPinVisibleChecksHideHoldouts(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	os.WriteFile(filepath.Join(j.Dir, "h_test.sh"), []byte("exit 0\n"), 0o644)
	logs := t.TempDir()
	logAt := func(i int) string { return filepath.Join(logs, strings.Repeat("x", i+1)+".log") }
	rs := j.runVisibleChecks(context.Background(), []string{"test -f h_test.sh"}, logAt)
	if len(rs) != 1 || !rs[0].Pass {
		t.Fatalf("without holdouts the check sees the folder: %+v", rs)
	}
	j.holdouts = []string{"h_test.sh"}
	rs = j.runVisibleChecks(context.Background(), []string{"test -f h_test.sh", "true"}, logAt)
	if len(rs) != 2 || rs[0].Pass || rs[0].Command != "test -f h_test.sh" || !rs[1].Pass {
		t.Fatalf("the holdout file was in sight: %+v", rs)
	}
}

// A loop being stopped cuts the visible checks short: the checks after the
// one cut are not run, and none is reported as unable to run.
func TestPinVisibleChecksStopWithTheLoop(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	os.WriteFile(filepath.Join(j.Dir, "h_test.sh"), []byte("exit 0\n"), 0o644)
	j.holdouts = []string{"h_test.sh"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	logs := t.TempDir()
	rs := j.runVisibleChecks(ctx, []string{"true", "true", "true"}, func(i int) string { return filepath.Join(logs, strings.Repeat("x", i+1)+".log") })
	if len(rs) != 1 {
		t.Fatalf("%d results after the loop stopped, want the one cut short: %+v", len(rs), rs)
	}
	if strings.Contains(rs[0].Signal, "holdout files in sight") {
		t.Errorf("a check cut short reads as unable to run: %q", rs[0].Signal)
	}
}

// flaky: quarantine: the quarantined tests leave the ratchet's baseline
// count, so a run where only they stopped passing is no drop; one more
// lost test is.
func TestPinRatchetLeavesQuarantinedOut(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Flaky: "quarantine"})
	j.Flaky = func() FlakyTests { return FlakyTests{"go test ./...": {"TestFlaky"}} }
	run := func(passed int) CheckResult {
		r := CheckResult{Tests: testcount.Counts{Known: true, Runner: "go", Passed: passed}}
		r.Command, r.Pass = "go test ./...", true
		return r
	}
	j.SaveTestBase([]CheckResult{run(3)}, true)
	if errs := j.Ratchet("cycle", []CheckResult{run(2)}); len(errs) != 0 {
		t.Fatalf("only the quarantined test stopped passing: %q", errs)
	}
	if errs := j.Ratchet("cycle", []CheckResult{run(1)}); len(errs) == 0 {
		t.Fatal("a real test stopped passing, and the ratchet let it through")
	}
}

// A check looprinter's own sandbox could not confine (exit 126 with the
// helper's message, before the check started) is the engine's failure:
// the message says so and never tells the user to chmod the check. The
// helper's line under another exit, or exit 126 without it, is the
// check's own.
func TestPinCannotRunConfinementIsTheEngines(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"v-check"}})
	helper := "looprinter check sandbox: cannot lay the copy-on-write layers: overlay on /x: too many levels of symbolic links"
	r := result("v-check", 126)
	r.Signal = helper
	got := j.CannotRun([]CheckResult{r})
	want := "the check `v-check` did not run: looprinter could not confine it (its own sandbox failed, not the check): " +
		"cannot lay the copy-on-write layers: overlay on /x: too many levels of symbolic links\nfix: this is not the check's fault"
	if !strings.HasPrefix(got, want) || strings.Contains(got, "chmod") || !strings.HasSuffix(got, "(no agent ran: a check that cannot run cannot judge one)") {
		t.Errorf("confinement failure: %q", got)
	}
	r127 := result("v-check", 127)
	r127.Signal = helper
	if got := j.CannotRun([]CheckResult{r127}); !strings.Contains(got, "the check could not run") || strings.Contains(got, "could not confine") {
		t.Errorf("exit 127 is the check's: %q", got)
	}
	r1 := result("v-check", 1)
	r1.Signal = helper
	if got := j.CannotRun([]CheckResult{r1}); got != "" {
		t.Errorf("exit 1 ran: %q", got)
	}
	plain := result("v-check", 126)
	plain.Signal = "sh: 1: ./run.sh: Permission denied\nnot the helper: looprinter check sandbox: x"
	if got := j.CannotRun([]CheckResult{plain}); strings.Contains(got, "could not confine") || !strings.HasPrefix(got, "the check `v-check` cannot run: the check could not run") {
		t.Errorf("a check's own 126: %q", got)
	}
	if confinementFailure(plain) != "" {
		t.Error("a line that only holds the helper's prefix is not the helper's")
	}
}
