package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func needLayers(t *testing.T) {
	t.Helper()
	if err := LayerProbe(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs where overlayfs can be mounted, but: %v", err)
		}
		t.Skipf("no copy-on-write layer here: %v", err)
	}
}

// A view shows the tree with some files hidden and others placed, at the
// tree's own path; what the command writes stays in the view, and a link
// planted on the way never leads a removal or a placement out of the tree.
func TestViewHidesPlacesAndWritesNothing(t *testing.T) {
	needLayers(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(tree, "pkg"), outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(tree, "pkg", "code.go"), []byte("code\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "pkg", "added_test.go"), []byte("forged\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "victim"), []byte("keep\n"), 0o644)
	os.Symlink(outside, filepath.Join(tree, "link"))
	held := filepath.Join(root, "held")
	os.WriteFile(held, []byte("holdout\n"), 0o600)
	l := Layer{Target: tree, Upper: filepath.Join(root, "u"), Work: filepath.Join(root, "w")}
	if _, err := PrepareLayer(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ClearLayer(l) }) // overlayfs leaves a folder of mode 000 in the work folder
	v := View{Layer: l, Hide: []string{"pkg/added_test.go", "link/victim"},
		Put: []ViewFile{{From: held, To: "pkg/holdout_test.go", Mode: 0o644}, {From: held, To: "link/placed", Mode: 0o644}}}
	prog, args, env, err := v.Command([]string{"/bin/sh", "-c", `pwd; ls; cat holdout_test.go; test -e added_test.go && echo LEAK; echo w > code.go; echo new > new.txt`}, filepath.Join(tree, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, filepath.Join(tree, "pkg")+"\n") || !strings.Contains(got, "holdout\n") || strings.Contains(got, "LEAK") || strings.Contains(got, "added_test.go") {
		t.Errorf("the view's command saw:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "pkg", "code.go")); string(b) != "code\n" {
		t.Errorf("the tree was written: code.go = %q", b)
	}
	for _, p := range []string{"pkg/new.txt", "pkg/holdout_test.go"} {
		if _, err := os.Stat(filepath.Join(tree, p)); err == nil {
			t.Errorf("%s reached the tree", p)
		}
	}
	if _, err := os.Stat(filepath.Join(tree, "pkg", "added_test.go")); err != nil {
		t.Errorf("the hidden file left the tree: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "keep\n" {
		t.Errorf("a removal went through the link: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "placed")); err == nil {
		t.Error("a placement went through the link")
	}
}
