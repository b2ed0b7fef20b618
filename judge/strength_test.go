package judge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

func gitIn(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

const clampBase = "def clamp(x, lo, hi):\n    raise NotImplementedError\n"
const clampDone = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"

// strengthLoop is a judge of a git loop folder whose calc.py changed from
// clampBase to clampDone since the base tree it returns.
func strengthLoop(t *testing.T) (*Judge, *[]record.Event, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	j, evs := newJudge(t, &spec.Loop{})
	os.WriteFile(filepath.Join(j.Dir, "calc.py"), []byte(clampBase), 0o644)
	os.WriteFile(filepath.Join(j.Dir, "test_calc.py"), []byte("import calc\n"), 0o644)
	gitIn(t, j.Dir, "init", "-q")
	base, err := safegit.SnapshotTree(context.Background(), j.Dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(j.Dir, "calc.py"), []byte(clampDone), 0o644)
	os.WriteFile(filepath.Join(j.Dir, "test_calc.py"), []byte("import calc\nassert calc.clamp(1, 0, 2) == 1\n"), 0o644)
	return j, evs, base
}

func TestChangedLinesLeaveTestsOut(t *testing.T) {
	j, _, base := strengthLoop(t)
	want := map[string][]int{"calc.py": {2, 3, 4, 5, 6}}
	for _, paths := range [][]string{nil, {"calc.py", "test_calc.py"}, {"calc.py", "gone.py"}} {
		got, err := ChangedLines(context.Background(), j.Dir, base, paths)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("paths %v: changed lines %v, want %v (test files left out)", paths, got, want)
		}
	}
	// A changed file git was told to ignore since is still compared.
	os.WriteFile(filepath.Join(j.Dir, ".gitignore"), []byte("calc.py\n"), 0o644)
	got, err := ChangedLines(context.Background(), j.Dir, base, []string{"calc.py", ".gitignore"})
	if err != nil || !reflect.DeepEqual(got["calc.py"], want["calc.py"]) {
		t.Errorf("an ignored changed file: %v, %v", got, err)
	}
	os.Remove(filepath.Join(j.Dir, ".gitignore"))
	// Only the paths named are compared.
	got, err = ChangedLines(context.Background(), j.Dir, base, []string{"test_calc.py"})
	if err != nil || len(got) != 0 {
		t.Errorf("changed lines %v, %v; want none", got, err)
	}
}

// A loop folder inside a repository: paths are the folder's own.
func TestChangedLinesInSubfolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sub")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(root, "other.py"), []byte("x = 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "calc.py"), []byte(clampBase), 0o644)
	gitIn(t, root, "init", "-q")
	ctx := context.Background()
	base, err := safegit.SnapshotTree(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "calc.py"), []byte(clampDone), 0o644)
	os.WriteFile(filepath.Join(root, "other.py"), []byte("x = 2\n"), 0o644)
	for _, paths := range [][]string{nil, {"calc.py"}} {
		got, err := ChangedLines(ctx, dir, base, paths)
		if err != nil || !reflect.DeepEqual(got, map[string][]int{"calc.py": {2, 3, 4, 5, 6}}) {
			t.Errorf("paths %v: %v, %v", paths, got, err)
		}
	}
}

func TestParseDiffLines(t *testing.T) {
	diff := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -3 +3 @@\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,2 +22,0 @@\n-e\n-f\n" +
		"diff --git a/new.py b/new.py\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x\n+y\n" +
		"--- a/x_test.go\n+++ b/x_test.go\n@@ -1 +1 @@\n-p\n+q\n"
	got := parseDiffLines(diff)
	want := map[string][]int{"x.go": {3, 11, 12}, "new.py": {1, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// The verdict of each mutant: a failing check catches it, a passing one
// lets it survive, a build failure is neither; the loop folder is never
// written.
func TestStrengthVerdicts(t *testing.T) {
	j, evs, base := strengthLoop(t)
	// None in the file: "does not build"; >= or <=: caught; else: survives.
	check := `if grep -q None calc.py; then echo 'FAIL calc [build failed]'; exit 2; fi; if grep -q '[<>]=' calc.py; then echo FAIL; exit 1; fi`
	s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{check}, Kind: sandbox.Off, Min: 0.6, Workers: 2})
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	if s.Mutants != 5 || s.Caught != 2 || s.NotCompiled != 3 || len(s.Survivors) != 0 || s.Score != 1 || !s.Pass || s.Mode != "copy" {
		t.Errorf("strength %+v", s)
	}
	if data, _ := os.ReadFile(filepath.Join(j.Dir, "calc.py")); string(data) != clampDone {
		t.Errorf("the loop folder's file was written:\n%s", data)
	}
	if len(*evs) != 1 || (*evs)[0].Event != record.VerifyStrength || (*evs)[0].Strength != s {
		t.Errorf("records %+v", *evs)
	}
	// A check that passes on everything lets every mutant survive.
	s = j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{"true"}, Kind: sandbox.Off, Min: 0.6})
	if s.Caught != 0 || len(s.Survivors) != 5 || s.Pass {
		t.Errorf("strength %+v", s)
	}
	if sv := s.Survivors[0]; sv.String() != "calc.py:2:10: flip < to >=" {
		t.Errorf("first survivor %q", sv)
	}
	if p := StrengthPrompt(s, 2); !strings.Contains(p, "write a test that fails on this mutant") || !strings.Contains(p, "- calc.py:2:10: flip < to >=") || !strings.Contains(p, "… and 3 more") {
		t.Errorf("prompt:\n%s", p)
	}
}

// Under bubblewrap each mutant runs in a view of the loop folder with the
// mutated file placed: the folder is never written.
func TestStrengthInView(t *testing.T) {
	if sandbox.LayerProbe() != nil {
		t.Skip("no copy-on-write layers here")
	}
	j, _, base := strengthLoop(t)
	check := `grep -q 'x < lo' calc.py && grep -q 'x > hi' calc.py && grep -q 'return x' calc.py`
	s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{check}, Kind: sandbox.Bwrap, Workers: 2})
	if s.Error != "" || s.Mode != "view" {
		t.Fatalf("strength %+v", s)
	}
	// flip < and >, return None instead of x change a grepped line; the
	// returns of lo and hi do not.
	if s.Caught != 3 || len(s.Survivors) != 2 {
		t.Errorf("strength %+v", s)
	}
	if data, _ := os.ReadFile(filepath.Join(j.Dir, "calc.py")); string(data) != clampDone {
		t.Errorf("the loop folder's file was written:\n%s", data)
	}
}

// The budget bounds the pass: mutants left when it runs out are not run,
// never counted as caught.
func TestStrengthBudget(t *testing.T) {
	j, _, base := strengthLoop(t)
	start := time.Now()
	s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{"sleep 5"}, Kind: sandbox.Off, Budget: 300 * time.Millisecond, Workers: 1})
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("the pass took %s past a budget of 300ms", el)
	}
	if s.NotRun != 5 || s.Caught != 0 || len(s.Survivors) != 0 {
		t.Errorf("strength %+v", s)
	}
	if !strings.Contains(record.StrengthLine(s), "5 not run: budget spent") {
		t.Errorf("line %q", record.StrengthLine(s))
	}
}

// Under a minimum, nothing judged fails closed: all mutants not compiled,
// or no mutant at all.
func TestStrengthNothingJudged(t *testing.T) {
	j, _, base := strengthLoop(t)
	s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{`if grep -q 'None\|>=\|<=' calc.py; then echo '[build failed]'; exit 1; fi`}, Kind: sandbox.Off, Min: 0.5})
	if s.NotCompiled != 5 || s.Pass {
		t.Errorf("strength %+v", s)
	}
	s = j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{"true"}, Kind: sandbox.Off, Min: 0.5, Paths: []string{"test_calc.py"}})
	if s.Mutants != 0 || s.Pass {
		t.Errorf("strength %+v", s)
	}
	s = j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{"true"}, Kind: sandbox.Off, Paths: []string{"test_calc.py"}})
	if !s.Pass {
		t.Errorf("without a minimum nothing to judge is no failure: %+v", s)
	}
}

// Checks that fail on the unmutated tree in the pass's tree (a broken
// sandbox, a check that depends on the loop folder's path) judge nothing:
// the pass is an error, never "every mutant caught".
func TestStrengthControlRun(t *testing.T) {
	j, _, base := strengthLoop(t)
	s := j.Strength(context.Background(), StrengthOptions{Base: base, Cmds: []string{"test \"$PWD\" = " + j.Dir}, Kind: sandbox.Off, Min: 0.5})
	if s.Error == "" || s.Caught != 0 || s.Pass || !strings.Contains(s.Error, "unmutated tree") {
		t.Errorf("strength %+v", s)
	}
}

func TestStrengthWithoutBase(t *testing.T) {
	j, _, _ := strengthLoop(t)
	s := j.Strength(context.Background(), StrengthOptions{Cmds: []string{"true"}, Kind: sandbox.Off, Min: 0.5})
	if s.Error == "" || s.Pass {
		t.Errorf("strength %+v", s)
	}
}

func TestNotCompiled(t *testing.T) {
	for _, c := range []struct {
		out  string
		want bool
	}{
		{"FAIL\texample.com/m [build failed]\n", true},
		{"# example.com/m\n./calc.go:4:2: declared and not used: x\n", true},
		{"./calc.go:3:2: \"fmt\" imported and not used\n", true},
		{"src/a.ts(3,5): error TS2322: Type 'number' is not assignable\n", true},
		{"--- FAIL: TestAdd (0.00s)\n    calc_test.go:9: got 2, want 3\nFAIL\n", false},
		{"AssertionError\n", false},
	} {
		if got := notCompiled.MatchString(c.out); got != c.want {
			t.Errorf("%q: %v, want %v", c.out, got, c.want)
		}
	}
	_ = fmt.Sprint
}
