package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// loopRepo is a repository with loops at its top, in svc/ (the tree), in
// b/ (never run: a loop file, an ignored holdout and records) and in
// new/ (a loop file git does not track yet), and a folder that is no loop.
func loopRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	top := canonicalOr(t.TempDir())
	files := map[string]string{
		".gitignore": "hidden.sh\nworking-records/\nbuild/\n", "loop.yaml": "x", "svc/loop.yaml": "x", "svc/main.go": "x",
		"b/loop.yaml": "x", "b/a.txt": "x", "b/hidden.sh": "SECRET", "b/working-records/t.log": "SECRET",
		"b/build/out": "x", "lib/x.go": "x", "new/loop.yaml": "x", "ran/working-records/state.json": "{}",
	}
	for f, c := range files {
		p := filepath.Join(top, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", ".gitignore", "loop.yaml", "svc", "b", "lib"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = top
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return top
}

// The loops around a tree are found from git's listing, whether their
// engines ran or not: the sibling with its tracked and untracked entries,
// one whose loop file git does not track, one known by its records
// folder only, and the loop at the top above the tree; not the tree's own
// loop, nor a folder that is no loop.
func TestOtherLoopsAround(t *testing.T) {
	top := loopRepo(t)
	tree := filepath.Join(top, "svc")
	got := map[string][]string{}
	others := map[string][]string{}
	for _, l := range listTree(top).around(tree, tree) {
		got[l.Dir] = l.Tracked
		others[l.Dir] = l.Others
	}
	for _, want := range []string{top, filepath.Join(top, "b"), filepath.Join(top, "new"), filepath.Join(top, "ran")} {
		if _, ok := got[want]; !ok {
			t.Errorf("loop %s not found: %v", want, got)
		}
	}
	for _, no := range []string{tree, filepath.Join(top, "lib")} {
		if _, ok := got[no]; ok {
			t.Errorf("%s taken as another loop", no)
		}
	}
	b := filepath.Join(top, "b")
	slices.Sort(got[b])
	if !slices.Equal(got[b], []string{"a.txt", "loop.yaml"}) {
		t.Errorf("b's tracked entries = %v", got[b])
	}
	for _, o := range []string{"hidden.sh", "working-records/", "build/"} {
		if !slices.Contains(others[b], o) {
			t.Errorf("b's untracked entries %v lack %s", others[b], o)
		}
	}
	if listTree("").around(tree, tree) != nil {
		t.Error("loops found with no work tree")
	}
}

// An agent whose loop folder holds other loops' folders does not see
// their records or what git ignores there; their tracked files stay its
// work.
func TestOtherLoopSecretsIn(t *testing.T) {
	top := loopRepo(t)
	got := OtherLoopSecretsIn(top)
	for _, want := range []string{"b/hidden.sh", "b/working-records", "b/build", "ran/working-records"} {
		if !slices.Contains(got, filepath.Join(top, filepath.FromSlash(want))) {
			t.Errorf("%s not kept from the agent: %v", want, got)
		}
	}
	for _, g := range got {
		if g == filepath.Join(top, "b", "a.txt") || g == filepath.Join(top, "working-records") || g == top {
			t.Errorf("%s kept from the agent", g)
		}
	}
	if s := OtherLoopSecretsIn(filepath.Join(top, "lib")); len(s) != 0 {
		t.Errorf("a folder holding no loop: %v", s)
	}
}
