package initwiz

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

func TestHoldoutCount(t *testing.T) {
	for _, c := range []struct {
		share string
		n     int
		want  int
		err   string
	}{
		{"", 5, 0, ""}, {"0", 5, 0, ""}, {"0%", 5, 0, ""},
		{"20%", 10, 2, ""}, {"20%", 3, 1, ""}, {"1%", 10, 1, ""}, {"40%", 5, 2, ""}, {" 2 ", 5, 2, ""},
		{"5", 5, 0, "would set aside all 5"}, {"90%", 2, 0, "would set aside all 2"},
		{"1", 1, 0, "needs at least 2"}, {"100%", 5, 0, "under 100%"}, {"-1", 5, 0, "a count"}, {"lots", 5, 0, "a count"},
	} {
		got, err := HoldoutCount(c.share, c.n)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("HoldoutCount(%q, %d) = %d, %v; want an error with %q", c.share, c.n, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("HoldoutCount(%q, %d) = %d, %v; want %d", c.share, c.n, got, err, c.want)
		}
	}
}

// The pick is spread evenly over the sorted list and the same every time.
func TestPickHoldout(t *testing.T) {
	files := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for k, want := range map[int][]string{1: {"f"}, 2: {"c", "h"}, 3: {"b", "f", "i"}, 9: {"a", "b", "c", "d", "f", "g", "h", "i", "j"}} {
		if got := PickHoldout(files, k); !reflect.DeepEqual(got, want) {
			t.Errorf("PickHoldout(10 files, %d) = %v, want %v", k, got, want)
		}
	}
}

func TestTestFilesAndHoldoutVerify(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":                    "module x\n",
		"a_test.go":                 "package x\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\nfunc helper(t *testing.T) {}\n",
		"noTests_test.go":           "package x\n\nfunc BenchmarkX(b *testing.B) {}\n",
		"pkg/b_test.go":             "package pkg\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {}\n\nfunc TestThree(tt *testing.T) {}\n",
		"vendor/v/v_test.go":        "package v\n\nimport \"testing\"\n\nfunc TestV(t *testing.T) {}\n",
		"pkg/testdata/x_test.go":    "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"tests/test_calc.py":        "def test_calc(): pass\n",
		"calc_test.py":              "def test_c(): pass\n",
		".venv/lib/test_dep.py":     "",
		"output/test_nothing.py":    "",
		"tests/helpers.py":          "",
		"tests/conftest.py":         "",
		"node_modules/x_test.go":    "",
		"working-records/test_x.py": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := TestFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a_test.go", "calc_test.py", "pkg/b_test.go", "tests/test_calc.py"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TestFiles = %v, want %v", got, want)
	}
	cmds := HoldoutVerify(dir, []string{"a_test.go", "pkg/b_test.go", "tests/test_calc.py"}, []string{"go vet ./...", "uv run pytest -q"})
	wantCmds := []string{"go test -v -run '^(TestOne)$' .", "go test -v -run '^(TestThree|TestTwo)$' ./pkg/", "uv run pytest -v tests/test_calc.py"}
	if !reflect.DeepEqual(cmds, wantCmds) {
		t.Errorf("HoldoutVerify = %q, want %q", cmds, wantCmds)
	}
	if r := pythonRunner(dir, []string{"python -m unittest discover"}); r != "python -m unittest" {
		t.Errorf("unittest checks: %q", r)
	}
	if r := pythonRunner(dir, nil); r != "python3 -m pytest" { // tests/conftest.py
		t.Errorf("a conftest.py, no check: %q", r)
	}
	if r := pythonRunner(t.TempDir(), nil); r != "python3 -m unittest" {
		t.Errorf("nothing: %q", r)
	}

	// The loop file names them and loads.
	a := Defaults()
	a.Objective, a.ObjectiveVerify, a.HoldoutShare = "go test ./... passes", []string{"go test ./..."}, "50%"
	if err := PlanHoldout(dir, &a); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Holdout, []string{"calc_test.py", "tests/test_calc.py"}) {
		t.Fatalf("Holdout = %v", a.Holdout)
	}
	l, err := spec.Parse(Render(a), filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Holdout, a.Holdout) || !reflect.DeepEqual(l.HoldoutVerify, []string{"python3 -m pytest -v calc_test.py tests/test_calc.py"}) || l.HoldoutFeedback != "count" {
		t.Errorf("loaded holdout %v, holdout_verify %v, feedback %q", l.Holdout, l.HoldoutVerify, l.HoldoutFeedback)
	}
	if !strings.Contains(a.Summary("loop.yaml"), "Holdout tests (set aside: the agent never sees them):\n  - calc_test.py\n") {
		t.Errorf("summary:\n%s", a.Summary("loop.yaml"))
	}
}

// JavaScript and TypeScript test files are told by name or folder, and
// must declare a test; helpers, fixtures and type declarations are not.
func TestJSTestFile(t *testing.T) {
	for rel, want := range map[string]bool{
		"src/a.test.ts": true, "src/a.spec.tsx": true, "lib/x.test.mjs": true, "test/serialize.js": true,
		"tests/unit/a.cjs": true, "src/__tests__/b.js": true,
		"test/fixtures/a.js": false, "test/helpers/x.js": false, "src/a.ts": false, "test/types.d.ts": false,
		"test/data.json": false, "src/__mocks__/fs.js": false,
	} {
		if got := jsTestFile(rel); got != want {
			t.Errorf("jsTestFile(%q) = %v, want %v", rel, got, want)
		}
	}
	for line, want := range map[string]bool{
		"  it('works', () => {})": true, `test("adds", () => {})`: true, "it.only(`x`, f)": true,
		"const it = 3": false, "// see the test file": false,
	} {
		if got := jsTestCall.MatchString(line); got != want {
			t.Errorf("jsTestCall on %q = %v, want %v", line, got, want)
		}
	}
}

// A check that names a test file, or a Go test function in its -run
// pattern, marks the file as holding the loop's failing target.
func TestCheckNamesTarget(t *testing.T) {
	if !checkNames("python3 -m pytest tests/test_bug.py::test_x -q", "tests/test_bug.py") || !checkNames("npx mocha ./test/a.js", "test/a.js") {
		t.Error("checkNames misses a named file")
	}
	if checkNames("python3 -m pytest tests/", "tests/test_bug.py") {
		t.Error("checkNames: a folder is not the file")
	}
	if !runNames("go test -run 'TestBug|TestOther' ./...", "TestBug") || !runNames("go test -run=^TestBug$ .", "TestBug") {
		t.Error("runNames misses a test function")
	}
	if runNames("go test -run TestBugs ./...", "TestBug") {
		t.Error("runNames: TestBugs is not TestBug")
	}
}
