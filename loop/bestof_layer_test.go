//go:build unix

package loop

import (
	"context"
	"github.com/looprinter/looprinter/wave"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// An attempt's change is measured on its layer against the folder: a
// changed file by its diff, a new file by its lines, a removed file
// (whiteout) by the lines it had, a replaced folder by what it hid.
func TestLayerChange(t *testing.T) {
	dir, upper := t.TempDir(), t.TempDir()
	write := func(root, rel, s string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dir, "a.go", "one\ntwo\nthree\n")
	write(dir, "gone.txt", "x\ny\n")
	write(dir, "same.txt", "s\n")
	write(dir, "old/k.txt", "k1\nk2\nk3\n")
	write(upper, "a.go", "one\nTWO\nthree\nfour\n") // 1 removed, 2 added
	write(upper, "new/n.txt", "n1\nn2")             // 2 added
	write(upper, "same.txt", "s\n")                 // 0
	if err := unix.Mknod(filepath.Join(upper, "gone.txt"), unix.S_IFCHR, 0); err != nil {
		t.Skipf("no whiteout can be made here: %v", err)
	}
	got, err := wave.LayerChange(context.Background(), dir, upper)
	if err != nil {
		t.Fatal(err)
	}
	if want := (wave.Change{Lines: 3 + 2 + 0 + 2, Files: 4}); got != want {
		t.Errorf("layerChange = %+v, want %+v", got, want)
	}
	// A replaced folder: everything below it in the folder is removed, its
	// files in the layer are new.
	if err := os.Mkdir(filepath.Join(upper, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(upper, "old/k.txt", "k1\n")
	if err := unix.Setxattr(filepath.Join(upper, "old"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		if err := unix.Setxattr(filepath.Join(upper, "old"), "user.overlay.opaque", []byte("y"), 0); err != nil {
			t.Skipf("no opaque folder can be marked here: %v", err)
		}
	}
	got, err = wave.LayerChange(context.Background(), dir, upper)
	if err != nil {
		t.Fatal(err)
	}
	if want := (wave.Change{Lines: 7 + 3 + 1, Files: 4 + 1 + 1}); got != want {
		t.Errorf("with a replaced folder: %+v, want %+v", got, want)
	}
}
