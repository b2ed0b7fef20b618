//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func needLayers(t testing.TB) {
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

// A file hidden in the agent's layer can be neither read, nor listed, nor
// written through to the folder: the agent's write lands in the layer in
// the whiteout's place, and the file under it is as it was.
func TestHideInLayer(t *testing.T) {
	need(t, Bwrap)
	needLayers(t)
	l := newLayout(t)
	os.MkdirAll(filepath.Join(l.dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(l.dir, "pkg", "holdout_test.go"), []byte("secret\n"), 0o644)
	os.WriteFile(filepath.Join(l.dir, "pkg", "code.go"), []byte("code\n"), 0o644)
	layerDir := filepath.Join(l.state, "layer")
	lay := Layer{Target: l.dir, Upper: filepath.Join(layerDir, "upper"), Work: filepath.Join(layerDir, "work")}
	if _, err := PrepareLayer(lay); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ClearLayer(lay) })
	if err := HideInLayer(lay, []string{"pkg/holdout_test.go"}); err != nil {
		t.Fatal(err)
	}
	p := l.policy(Bwrap)
	p.Layers = []Layer{lay}
	cmd, err := wrapped(p, `cat pkg/holdout_test.go && echo READ; ls pkg; grep -r secret . && echo FOUND; echo mine > pkg/holdout_test.go; echo done`, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	got := string(out)
	if err != nil || !strings.Contains(got, "done") || strings.Contains(got, "READ") || strings.Contains(got, "FOUND") || strings.Contains(got, "holdout_test.go\n") || !strings.Contains(got, "code.go") {
		t.Fatalf("the agent saw: %v\n%s", err, got)
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "pkg", "holdout_test.go")); string(b) != "secret\n" {
		t.Errorf("the hidden file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(lay.Upper, "pkg", "holdout_test.go")); string(b) != "mine\n" {
		t.Errorf("the agent's write is not in the layer: %q", b)
	}
}

// A hidden folder is empty to the agent under bwrap.
func TestBwrapHiddenFolder(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	secret := filepath.Join(l.state, "holdout-checks")
	os.MkdirAll(secret, 0o700)
	os.WriteFile(filepath.Join(secret, "out.log"), []byte("FAIL: TestSecret\n"), 0o600)
	p := l.policy(Bwrap)
	p.Hidden = []string{secret}
	cmd, err := wrapped(p, `cat `+secret+`/out.log && echo READ; ls -A `+secret+`; echo done`, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "READ") || strings.Contains(string(out), "out.log\n") || !strings.Contains(string(out), "done") {
		t.Fatalf("the agent saw: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(secret, "out.log")); string(b) != "FAIL: TestSecret\n" {
		t.Errorf("the hidden folder changed: %q", b)
	}
}

// The clean room's view: starting /bin/true in a copy-on-write view of a
// 10,000-file tree with 1,000 files hidden, against starting it bare. The
// view costs the same whatever the tree's size: one mount, and one
// whiteout per hidden file.
func BenchmarkViewStart(b *testing.B) {
	needLayers(b)
	root := b.TempDir()
	tree := filepath.Join(root, "tree")
	var hide []string
	for i := 0; i < 10000; i++ {
		d := filepath.Join(tree, fmt.Sprintf("pkg%03d", i/100))
		os.MkdirAll(d, 0o755)
		name := fmt.Sprintf("f%04d.go", i)
		if i%10 == 0 {
			name = fmt.Sprintf("f%04d_test.go", i)
			hide = append(hide, fmt.Sprintf("pkg%03d/%s", i/100, name))
		}
		os.WriteFile(filepath.Join(d, name), []byte("package p\n"), 0o644)
	}
	l := Layer{Target: tree, Upper: filepath.Join(root, "u"), Work: filepath.Join(root, "w")}
	if _, err := PrepareLayer(l); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("hidden=%d", n), func(b *testing.B) {
			v := View{Layer: l, Hide: hide[:n]}
			for i := 0; i < b.N; i++ {
				prog, args, env, err := v.Command([]string{"/bin/true"}, tree)
				if err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(prog, args...)
				cmd.Env = append(os.Environ(), env)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				b.StopTimer()
				ClearLayer(l)
				b.StartTimer()
			}
		})
	}
}
