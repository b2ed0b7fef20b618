//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A box is kept for a view whose every option viewIDs reads: the same
// view gives the same key, a bound folder made again another. An option
// it does not know, or one cut short, gives a key of its own each time:
// that box is never reused, rather than reused for a path the key did not
// look at. The command after "--" is not read as options.
func TestViewIDsReadOnlyWhatTheyKnow(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	key := func(a ...string) string {
		var k strings.Builder
		viewIDs(&k, a)
		return k.String()
	}
	view := []string{"--die-with-parent", "--unshare-pid", "--cap-add", "ALL", "--ro-bind", src, "/src", "--tmpfs", "/tmp",
		"--symlink", "usr/bin", "/bin", "--setenv", "A", "B", "--chdir", "/", "--", "/proc/self/fd/5", "--overlay-src", src}
	if key(view...) != key(view...) {
		t.Fatal("one view, two keys: its box would never be reused")
	}
	before := key(view...)
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if key(view...) == before {
		t.Error("a bound folder made again left the key as it was")
	}
	for _, odd := range [][]string{
		{"--ro-bind", src, "/src", "--overlay-src", src, "--ro-overlay", "/x"},
		{"--ro-bind", src, "/src", "stray"},
		{"--ro-bind", src},
	} {
		if key(odd...) == key(odd...) {
			t.Errorf("%q: a view viewIDs cannot read gave one key twice", odd)
		}
	}
}

// The run box's own view is one viewIDs reads whole: its key is not one
// of its own, so the loop's runs share one box.
func TestRunBoxViewIsRead(t *testing.T) {
	_, p, _ := boxLayout(t)
	p.Box = true
	path, _, _, err := p.Wrap("/bin/sh", []string{"-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	b := TakeBoxedRun(path)
	if b == nil {
		t.Fatalf("Wrap did not offer the run to a box: %s", path)
	}
	if k := b.keyOf(); strings.Contains(k, "\x05unread") {
		t.Errorf("the run box's view has an option viewIDs does not read:\n%q", b.view)
	}
}
