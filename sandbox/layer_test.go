//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Under bwrap with a layer over the loop folder (as root, or as a user
// through a user namespace; the agent is the same user either way, with no
// capability), the agent's writes never reach the folder while it runs: they land in the layer, which is the
// exact list of what it changed; the engine then applies what it accepts
// and nothing else, and the layer is empty again.
func TestLayeredBwrap(t *testing.T) {
	need(t, Bwrap)
	if err := LayerProbe(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs where overlayfs can be mounted, but: %v", err)
		}
		t.Skipf("no copy-on-write layer here: %v", err)
	}
	l := newLayout(t)
	os.WriteFile(filepath.Join(l.dir, "gone.txt"), []byte("x\n"), 0o644)
	os.MkdirAll(filepath.Join(l.dir, "old", "deep"), 0o755)
	os.WriteFile(filepath.Join(l.dir, "old", "deep", "a"), []byte("a\n"), 0o644)
	os.Symlink(l.root, filepath.Join(l.dir, "outside"))
	layerDir := filepath.Join(l.state, "layer")
	lay := Layer{Target: l.dir, Upper: filepath.Join(layerDir, "upper"), Work: filepath.Join(layerDir, "work")}
	if left, err := PrepareLayer(lay); err != nil || left {
		t.Fatalf("PrepareLayer: %v %v", left, err)
	}
	p := l.policy(Bwrap)
	p.Layers = []Layer{lay}
	script := `set -e
echo new > new.txt
echo changed > spec/protected.md
rm gone.txt
rm -r old && mkdir old && echo b > old/b
mkdir -p working-records && echo forged > working-records/state.json
ln -s /etc/hostname link
grep -q '^CapEff:.0000000000000000' /proc/self/status && echo "no capabilities"
[ "$(id -u)" = "$WANT_UID" ] && echo "same user"
echo done`
	cmd, err := wrapped(p, script, []string{"WANT_UID=" + strconv.Itoa(os.Getuid())})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done") || !strings.Contains(string(out), "no capabilities") || !strings.Contains(string(out), "same user") {
		t.Fatalf("the run: %v: %s", err, out)
	}
	// Nothing reached the loop folder.
	if _, err := os.Stat(filepath.Join(l.dir, "new.txt")); err == nil {
		t.Error("a file written in the layer is in the loop folder before it was applied")
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "spec", "protected.md")); string(b) != "keep me\n" {
		t.Errorf("the protected file changed during the run: %q", b)
	}
	if _, err := os.Stat(filepath.Join(l.dir, "gone.txt")); err != nil {
		t.Error("a file removed in the layer is gone from the loop folder before it was applied")
	}
	refused := map[string]bool{"spec/protected.md": true, "working-records": true}
	changes, err := ApplyLayer(lay, func(rel string) bool { return !refused[rel] }, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Path+" "+c.What+" "+map[bool]string{true: "applied", false: "discarded"}[c.Applied])
	}
	sort.Strings(got)
	want := []string{
		"gone.txt removed applied",
		"link link applied",
		"new.txt written applied",
		"old replaced folder applied",
		"old/b written applied",
		"spec folder applied",
		"spec/protected.md written discarded",
		"working-records/state.json written discarded",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the layer's changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "new.txt")); string(b) != "new\n" {
		t.Errorf("new.txt = %q after the apply", b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "spec", "protected.md")); string(b) != "keep me\n" {
		t.Errorf("the refused change was applied: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.dir, "working-records", "state.json")); string(b) != "{}\n" {
		t.Errorf("the records were written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(l.dir, "gone.txt")); err == nil {
		t.Error("gone.txt is still there after the apply")
	}
	if _, err := os.Stat(filepath.Join(l.dir, "old", "deep")); err == nil {
		t.Error("the replaced folder kept what the agent removed")
	}
	if to, _ := os.Readlink(filepath.Join(l.dir, "link")); to != "/etc/hostname" {
		t.Errorf("link -> %q", to)
	}
	if left, _ := PrepareLayer(lay); left {
		t.Error("the layer is not empty after the apply")
	}
}

// A layer never writes through a link: a file under a folder that is a
// link in the loop folder is discarded, and the link's target is left
// alone.
func TestApplyLayerRefusesLinks(t *testing.T) {
	root := t.TempDir()
	target, outside := filepath.Join(root, "t"), filepath.Join(root, "outside")
	os.MkdirAll(target, 0o755)
	os.MkdirAll(outside, 0o755)
	os.Symlink(outside, filepath.Join(target, "out"))
	lay := Layer{Target: target, Upper: filepath.Join(root, "u"), Work: filepath.Join(root, "w")}
	PrepareLayer(lay)
	// As if the agent had replaced the link by a folder holding a file,
	// and overlayfs had not marked it opaque.
	os.MkdirAll(filepath.Join(lay.Upper, "out"), 0o755)
	os.WriteFile(filepath.Join(lay.Upper, "out", "f"), []byte("x"), 0o644)
	changes, err := ApplyLayer(lay, func(string) bool { return true }, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Fatal("the apply wrote through a link")
	}
	if fi, err := os.Lstat(filepath.Join(target, "out")); err != nil || !fi.IsDir() {
		t.Fatalf("out is %v %v, want the folder the agent made", fi, err)
	}
	if len(changes) != 2 || !changes[1].Applied {
		t.Errorf("changes %+v", changes)
	}
}

// A layer on another file system than its target (the private folder on
// one disk, the loop folder on another) is applied by a copy beside the
// target and a rename, with the file's mode.
func TestApplyLayerAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "looprinter-layer-")
	if err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	defer os.RemoveAll(shm)
	target := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(shm, &a) != nil || syscall.Stat(target, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the same file system as the temporary folder")
	}
	os.WriteFile(filepath.Join(target, "f"), []byte("old"), 0o644)
	lay := Layer{Target: target, Upper: filepath.Join(shm, "u"), Work: filepath.Join(shm, "w")}
	PrepareLayer(lay)
	os.WriteFile(filepath.Join(lay.Upper, "f"), []byte("new"), 0o755)
	if _, err := ApplyLayer(lay, func(string) bool { return true }, ""); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(target, "f"))
	if b, _ := os.ReadFile(filepath.Join(target, "f")); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("f = %q, mode %v, %v", b, fi.Mode().Perm(), err)
	}
	if left, _ := PrepareLayer(lay); left {
		t.Error("the layer is not empty after the apply")
	}
}
