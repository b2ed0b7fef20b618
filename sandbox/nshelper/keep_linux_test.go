package nshelper

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What the last start left in keep is used again where it is the empty
// folders a start makes (w<i> once its overlayfs "work" of mode 000 is
// gone); anything else is removed.
func TestReuseKeep(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "keep")
	for _, d := range []string{"base", "m0", "m1/x", "w0/work", "w1/work/y", "w2/other", "mx"} {
		if err := os.MkdirAll(filepath.Join(keep, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(keep, "w0", "work"), 0)
	os.WriteFile(filepath.Join(keep, "file"), nil, 0o600)
	if err := reuseKeep(keep); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(keep)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if !EmptyDir(filepath.Join(keep, e.Name())) {
			t.Errorf("%s is not empty", e.Name())
		}
	}
	if want := []string{"base", "m0", "w0"}; !slices.Equal(names, want) {
		t.Errorf("keep holds %v, want %v", names, want)
	}
	for _, d := range []string{"m0", "w0", "w3"} {
		if err := mkdirKept(filepath.Join(keep, d)); err != nil {
			t.Errorf("mkdirKept %s: %v", d, err)
		}
	}
	if err := mkdirKept(filepath.Join(keep, "base", "..", "file2")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(keep, "file2"))
	os.WriteFile(filepath.Join(keep, "f"), nil, 0o600)
	if err := mkdirKept(filepath.Join(keep, "f")); err == nil {
		t.Errorf("mkdirKept over a file succeeded")
	}
	if err := reuseKeep(filepath.Join(keep, "none")); err != nil {
		t.Errorf("no keep yet: %v", err)
	}
}
