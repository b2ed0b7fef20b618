//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// A run's private temporary folder is empty, 0700 and this user's at each
// run: the last run's empty one is kept as it is (the same inode); one
// with something left in it, of another mode, or a link is made again.
func TestFreshPrivateDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "tmp")
	check := func(what string) {
		t.Helper()
		if err := freshPrivateDir(dir); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil || fi.Mode() != os.ModeDir|0o700 || !emptyDir(dir) {
			t.Fatalf("%s: %v %v, want an empty folder of mode 0700", what, fi, err)
		}
	}
	check("none yet")
	first, _ := os.Lstat(dir)
	check("empty")
	if again, _ := os.Lstat(dir); !os.SameFile(first, again) {
		t.Errorf("an empty private folder was made again")
	}
	os.WriteFile(filepath.Join(dir, "left"), []byte("x"), 0o600)
	check("something left")
	os.Chmod(dir, 0o777)
	check("another mode")
	os.Remove(dir)
	os.Symlink(base, dir)
	check("a link")
}

// ClearWork leaves an empty work folder after an overlay's unmount (its
// "work" folder of mode 000), and after anything else left there.
func TestClearWorkFast(t *testing.T) {
	l := Layer{Work: filepath.Join(t.TempDir(), "w")}
	for _, leave := range []func(){
		func() { os.MkdirAll(filepath.Join(l.Work, "work"), 0o700); os.Chmod(filepath.Join(l.Work, "work"), 0) },
		func() { os.MkdirAll(filepath.Join(l.Work, "index", "x"), 0o700) },
		func() { os.MkdirAll(filepath.Join(l.Work, "work", "x"), 0o700) },
		func() { os.RemoveAll(l.Work) },
	} {
		leave()
		if err := ClearWork(l); err != nil {
			t.Fatal(err)
		}
		if !emptyDir(l.Work) {
			ents, _ := os.ReadDir(l.Work)
			t.Fatalf("the work folder holds %v after ClearWork", ents)
		}
	}
}
