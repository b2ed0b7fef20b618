package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Landlock's grants for the work tree around a check's tree never hold a
// hidden or masked path (nor a folder above one); everything else of the
// work tree is granted.
func TestGrantsAvoiding(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{"svc", "other/deep", "loopb/working-records", "loopb/src"} {
		os.MkdirAll(filepath.Join(top, d), 0o755)
	}
	os.WriteFile(filepath.Join(top, "other", "v.txt"), []byte("2"), 0o644)
	os.WriteFile(filepath.Join(top, "loopb", "holdout.py"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(top, "loopb", "main.py"), []byte("x"), 0o644)
	avoid := []string{filepath.Join(top, "loopb", "working-records"), filepath.Join(top, "loopb", "holdout.py")}
	got := grantsAvoiding(top, avoid, 0)
	has := map[string]bool{}
	for _, g := range got {
		has[g] = true
		for _, a := range avoid {
			if Within(a, g) {
				t.Errorf("granted %s, which holds the hidden %s", g, a)
			}
		}
	}
	for _, want := range []string{"svc", "other", "loopb/src", "loopb/main.py"} {
		if !has[filepath.Join(top, want)] {
			t.Errorf("%s not granted: %v", want, got)
		}
	}
	if g := grantsAvoiding(top, nil, 0); len(g) != 1 || g[0] != top {
		t.Errorf("nothing hidden: grants %v, want the folder itself", g)
	}
	if g := grantsAvoiding(filepath.Join(top, "loopb", "working-records"), avoid, 0); len(g) != 0 {
		t.Errorf("a hidden folder itself granted: %v", g)
	}
	// aroundOf: only a folder above the tree.
	tree := filepath.Join(top, "svc")
	if a, _ := aroundOf(top, tree, avoid); a == "" {
		t.Error("the work tree above the tree was not taken")
	}
	if a, _ := aroundOf(tree, tree, nil); a != "" {
		t.Error("the tree itself taken as its own work tree")
	}
	if a, _ := aroundOf(filepath.Join(top, "other"), tree, nil); a != "" {
		t.Error("a folder beside the tree taken as its work tree")
	}
}
