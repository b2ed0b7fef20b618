package testcount

import (
	"reflect"
	"testing"
)

// A panic in a helper names the test's own frame first, then the
// helper's; pytest's frame in the test file comes with the exception,
// before the helper's line (real output, testdata/README.md).
func TestFailuresTestFrameFirst(t *testing.T) {
	panicLines := []string{"panic: runtime error: index out of range [0] with length 0 [recovered, repanicked]",
		"at /src/sample/gp_test.go:14 (example.com/gp.TestGet)", "at /src/sample/gp_test.go:6 (example.com/gp.assertGet)"}
	for _, tc := range []struct {
		file string
		want Failure
	}{
		{"go-v-panic-helper.txt", Failure{"go", "example.com/gp.TestGet", panicLines}},
		{"go-json-panic-helper.txt", Failure{"go-json", "example.com/gp.TestGet", panicLines}},
		// GOTRACEBACK=system: each frame with its registers, the goroutine with its ids.
		{"go-v-panic-system.txt", Failure{"go", "example.com/gp.TestGet", panicLines}},
	} {
		got, _ := failuresOf(t, sample(t, tc.file))
		if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s: got %q\nwant %q", tc.file, got, tc.want)
		}
	}
	got, _ := failuresOf(t, sample(t, "pytest-param.txt"))
	want := map[string][]string{
		"tests/test_add.py::test_add[1-2-3]": {"E       assert -1 == 3", "tests/test_add.py:9: AssertionError", "E        +  where -1 = add(1, 2)"},
		"tests/test_add.py::test_helper[2]":  {"E       assert 0 == 4", "tests/test_add.py:13:", "tests/test_add.py:5: AssertionError"},
		"tests/test_add.py::test_plain":      {"E       assert 0 == 2", "tests/test_add.py:16: AssertionError", "E        +  where 0 = add(1, 1)"},
	}
	if len(got) != 8 {
		t.Fatalf("%d failures: %q", len(got), got)
	}
	for _, f := range got {
		if w, ok := want[f.Name]; ok && !reflect.DeepEqual(f.Lines, w) {
			t.Errorf("%s: %q, want %q", f.Name, f.Lines, w)
		}
		delete(want, f.Name)
	}
	if len(want) > 0 {
		t.Errorf("not found: %v", want)
	}
	// A frame of the standard library or a helper module is not the test's.
	// --tb=short: the frames, then the exception.
	got, _ = failuresOf(t, "=== FAILURES ===\n___ test_x ___\n/usr/lib/python3/x.py:3: in f\n    g()\ntest/unit/test_y.py:9: in test_x\n    f()\nsrc/pkg/mod.py:4: in g\n    raise ValueError\nE   ValueError: no\n=== short test summary info ===\nFAILED t.py::test_x - ValueError: no\n")
	if w := []string{"E   ValueError: no", "test/unit/test_y.py:9: in test_x"}; len(got) != 1 || !reflect.DeepEqual(got[0].Lines, w) {
		t.Errorf("got %q, want lines %q", got, w)
	}
}

func TestGoTestFunc(t *testing.T) {
	for fn, want := range map[string]bool{
		"example.com/x.TestParse": true, "example.com/x.TestParse.func1": true, "x.Test": true, "example.com/x.Test_under": true,
		"example.com/x.Testify": false, "example.com/x.assert": false, "example.com/test.TestX": true, "TestX": false, "example.com/a.b/x.helper": false,
	} {
		if got := goTestFunc(fn); got != want {
			t.Errorf("%s: %v", fn, got)
		}
	}
}

// The cases of a parametrized test are told by each runner's naming.
func TestCaseOf(t *testing.T) {
	for _, tc := range []struct {
		f          Failure
		family, id string
		ok         bool
	}{
		{Failure{Runner: "pytest", Name: "tests/test_x.py::test_add[1-2]"}, "tests/test_x.py::test_add", "1-2", true},
		{Failure{Runner: "pytest", Name: "tests/test_x.py::TestA::test_add[a[0]]"}, "tests/test_x.py::TestA::test_add", "a[0]", true},
		{Failure{Runner: "pytest", Name: "tests/test_x.py::test_add"}, "", "", false},
		{Failure{Runner: "pytest", Name: "tests/test_[x].py::test_add"}, "", "", false},
		{Failure{Runner: "go", Name: "example.com/a/b.TestParse/empty/x"}, "example.com/a/b.TestParse", "empty/x", true},
		{Failure{Runner: "go-json", Name: "TestParse/empty"}, "TestParse", "empty", true},
		{Failure{Runner: "go", Name: "example.com/a/b.TestParse"}, "", "", false},
		{Failure{Runner: "go", Name: "example.com/a/b.TestParse/"}, "", "", false},
		{Failure{Runner: "unittest", Name: "mod.Class.test_x (i=1)"}, "mod.Class.test_x", "i=1", true},
		{Failure{Runner: "unittest", Name: "mod.Class.test_x"}, "", "", false},
		{Failure{Runner: "jest", Name: "math › adds 1 + 2"}, "math › adds # + #", "adds 1 + 2", true},
		{Failure{Runner: "vitest", Name: `parse > reads "x"`}, "parse > reads #", `reads "x"`, true},
		{Failure{Runner: "mocha", Name: "parse reads"}, "", "", false},
		{Failure{Runner: "cargo", Name: "tests::case_1"}, "", "", false},
	} {
		fam, id, ok := CaseOf(tc.f)
		if fam != tc.family || id != tc.id || ok != tc.ok {
			t.Errorf("%s %s: %q %q %v", tc.f.Runner, tc.f.Name, fam, id, ok)
		}
	}
}
