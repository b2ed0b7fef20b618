//go:build linux

package nshelper

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// The kept paths of a built view: inside the target only, shallowest
// first, none inside another (a kept folder's layer shows it).
func TestKeptPaths(t *testing.T) {
	l := Layer{Target: "/home/u", Keep: []string{"/home/u/.config/git", "/home/u/.claude", "/home/u/.claude/x", "/etc/passwd", "/home/u", "/home/u/.config", "/home/uv/y", "/home/u/.gitconfig"}}
	want := []string{".claude", ".config", ".gitconfig"}
	if got := keptPaths(l); !reflect.DeepEqual(got, want) {
		t.Errorf("keptPaths = %q, want %q", got, want)
	}
}

// A folder laid over the target hides a kept path when it holds a file,
// a link or a replaced folder at it or on its way; a plain folder merges
// and hides nothing; a folder that says nothing of the path lets the next
// one decide.
func TestShadowed(t *testing.T) {
	up, low := t.TempDir(), t.TempDir()
	for _, d := range []string{"a/b", "merged/k", "opq/k"} {
		os.MkdirAll(filepath.Join(up, d), 0o755)
	}
	os.WriteFile(filepath.Join(up, "file"), nil, 0o644)
	os.Symlink("/etc", filepath.Join(up, "link"))
	os.MkdirAll(filepath.Join(low, "deep"), 0o755)
	os.WriteFile(filepath.Join(low, "deep", "k"), nil, 0o644)
	opaqueOK := unix.Setxattr(filepath.Join(up, "opq"), "user.overlay.opaque", []byte("y"), 0) == nil
	for rel, want := range map[string]bool{
		"a/b": false, "a/b/c": false, "merged/k": false, "absent/k": false,
		"file": true, "file/k": true, "link/k": true, "deep/k": true, "deep/k/x": true,
	} {
		if got := shadowed([]string{up, low}, rel); got != want {
			t.Errorf("shadowed(%s) = %v", rel, got)
		}
	}
	if opaqueOK && !shadowed([]string{up}, "opq/k") {
		t.Error("a replaced folder on the way does not hide the kept path")
	}
	if !opaqueOK {
		t.Log("user.overlay.opaque cannot be set here: the replaced folder is not tried")
	}
}

// A kept path that is or is inside another layer's target is that
// layer's: the base holds its mount point only.
func TestInOther(t *testing.T) {
	l := Layer{Target: "/home/u"}
	layers := []Layer{l, {Target: "/home/u/proj/loop"}, {Target: "/srv"}}
	for rel, want := range map[string]bool{"proj/loop": true, "proj/loop/x": true, "proj": false, "proj/loops": false, ".claude": false} {
		if got := inOther(l, rel, layers); got != want {
			t.Errorf("inOther(%s) = %v", rel, got)
		}
	}
}
