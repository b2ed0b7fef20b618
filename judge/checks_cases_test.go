package judge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/testcount"
)

// 38 failing cases of two parametrized pytest tests (real output): two of
// each shown in full, with the assertion and file:line, the rest counted
// by test with their ids, not 38 name lines with no reason.
func TestSignalGroupsCases(t *testing.T) {
	res := signalOf(t, "pytest-param-many.txt")
	for _, w := range []string{
		"FAIL: tests/test_many.py::test_double[0]\n    E       assert 0 == ((2 * 0) + 1)\n    tests/test_many.py:6: AssertionError",
		"FAIL: tests/test_many.py::test_double[1]\n    E       assert 0 == ((2 * 1) + 1)\n    tests/test_many.py:6: AssertionError",
		"… and 18 more cases of tests/test_many.py::test_double (ids 2, 3, 4, 5,",
		"FAIL: tests/test_many.py::test_words[a0]\n    E       AssertionError: assert 1 == (2 + 1)",
		"FAIL: tests/test_many.py::test_words[a1]",
		"… and 16 more cases of tests/test_many.py::test_words (ids a2, a3,",
		"tests/test_many.py:10: AssertionError",
	} {
		if !strings.Contains(res.Signal, w) {
			t.Errorf("the signal lacks %q:\n%s", w, res.Signal)
		}
	}
	if n := strings.Count(res.Signal, "FAIL: "); n != 4 {
		t.Errorf("%d tests shown, want 4:\n%s", n, res.Signal)
	}
	if len(res.Failed) != 38 || strings.Contains(res.Signal, "more failing tests") {
		t.Errorf("%d failed named; signal:\n%s", len(res.Failed), res.Signal)
	}
	// A Go panic in a helper: the test's own frame, then the helper's.
	res = signalOf(t, "go-v-panic-helper.txt")
	if w := "    at /src/sample/gp_test.go:14 (example.com/gp.TestGet)\n    at /src/sample/gp_test.go:6 (example.com/gp.assertGet)"; !strings.Contains(res.Signal, w) {
		t.Errorf("the signal lacks %q:\n%s", w, res.Signal)
	}
}

// The groups share the signal's lines like single tests; past the cap the
// rest are counted, a group's hidden cases among them; one more case is
// "case", the ids are cut.
func TestSignalCaseLines(t *testing.T) {
	red := redact.New(nil, nil, nil)
	var fs []testcount.Failure
	for i := 0; i < 3; i++ {
		fs = append(fs, testcount.Failure{Runner: "go", Name: "p.TestA/c" + strings.Repeat("x", 60) + string(rune('0'+i)), Lines: []string{"a_test.go:1: bad"}})
	}
	fs = append(fs, testcount.Failure{Runner: "go", Name: "p.TestB", Lines: []string{"b_test.go:2: bad", "more"}})
	got := strings.Join(testFailureLines(fs, 0, red), "\n")
	want := "FAIL: p.TestA/c" + strings.Repeat("x", 60) + "0\n    a_test.go:1: bad\nFAIL: p.TestA/c" + strings.Repeat("x", 60) + "1\n    a_test.go:1: bad\n" +
		"… and 1 more case of p.TestA (ids c" + strings.Repeat("x", 60) + "2)\nFAIL: p.TestB\n    b_test.go:2: bad\n    more"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if ids := caseIDs([]string{strings.Repeat("a", 150), strings.Repeat("b", 60), "c"}); ids != strings.Repeat("a", 150)+", …" {
		t.Errorf("ids %q", ids)
	}
	// 30 tests of 2 cases each (the last of 3): 60 shown and a tail do
	// not fit 40 lines: 39 are shown, the other 21 and the hidden case
	// counted with the 2 past the parser's cap.
	fs = nil
	for i := 0; i < 30; i++ {
		for c := 0; c < 2+min(i/29, 1); c++ {
			fs = append(fs, testcount.Failure{Runner: "pytest", Name: "t.py::test_" + string(rune('A'+i)) + "[" + string(rune('0'+c)) + "]"})
		}
	}
	lines := testFailureLines(fs, 2, red)
	if len(lines) != SignalLines || lines[len(lines)-1] != "… and 24 more failing tests" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// `! git grep -q TODO` where git cannot run (no repository) passed under
// `!`: it fails, saying why; the same check in a repository with no TODO
// passes, and `! grep` of a file that is not there fails.
func TestNegatedCheckThatCannotRunFails(t *testing.T) {
	dir := t.TempDir()
	run := func(cmd string) CheckResult {
		return Check(context.Background(), CheckRequest{Loop: &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute)}, Cmds: []string{cmd}, LogPath: func(int) string { return filepath.Join(t.TempDir(), "check.log") }, Env: append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir)), Redactor: redact.New(nil, nil, nil), Unconfined: true})[0]
	}
	r := run("! git grep -q TODO")
	if r.Pass || r.ExitCode != 1 || !strings.Contains(r.Signal, "the check cannot fail as it ran: `git` could not run (fatal: not a git repository") || r.NegatedNotRun == "" {
		t.Errorf("no repository: %+v", r)
	}
	r = run("! grep -q TODO missing.txt")
	if r.Pass || !strings.Contains(r.NegatedNotRun, "grep: missing.txt: No such file or directory") {
		t.Errorf("missing file: %+v", r)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("done\n"), 0o644)
	if r := run("! grep -q TODO a.txt"); !r.Pass || r.NegatedNotRun != "" {
		t.Errorf("a file without TODO: %+v", r)
	}
	if err := exec.Command("git", "init", "-q", dir).Run(); err == nil {
		if r := run("! git grep -q TODO"); !r.Pass {
			t.Errorf("a repository without TODO: %+v", r)
		}
	}
}
