//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// An upper folder's entries, sorted, each saying what it stands for.
func TestLayerEntries(t *testing.T) {
	up := t.TempDir()
	os.MkdirAll(filepath.Join(up, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(up, "a", "b", "f.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(up, "z.txt"), []byte("x"), 0o644)
	os.Symlink("z.txt", filepath.Join(up, "l"))
	if err := unix.Mknod(filepath.Join(up, "gone"), unix.S_IFCHR, 0); err != nil {
		t.Skipf("no whiteout can be made here: %v", err)
	}
	os.Mkdir(filepath.Join(up, "r"), 0o755)
	if unix.Setxattr(filepath.Join(up, "r"), "trusted.overlay.opaque", []byte("y"), 0) != nil &&
		unix.Setxattr(filepath.Join(up, "r"), "user.overlay.opaque", []byte("y"), 0) != nil {
		t.Skip("no opaque folder can be marked here")
	}
	got, err := LayerEntries(up)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ rel, what string }{{"a", "folder"}, {"a/b", "folder"}, {"a/b/f.txt", "written"}, {"gone", "removed"}, {"l", "link"}, {"r", "replaced folder"}, {"z.txt", "written"}}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Rel != w.rel || got[i].What != w.what {
			t.Errorf("entry %d: %s %s, want %s %s", i, got[i].Rel, got[i].What, w.rel, w.what)
		}
	}
}
