//go:build linux

package guard

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/looprinter/looprinter/spec"
	"golang.org/x/sys/unix"
)

// The watch sees a folder made and filled in one go: files written before
// its watch was added are found by the walk of the new folder.
func TestTreeWatchNewFolders(t *testing.T) {
	dir := t.TempDir()
	w, err := newTreeWatch(dir, watchSkip(dir, &spec.Loop{}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "c", "f.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "objects", "o"), []byte("x"), 0o644)
	tk := w.take()
	if tk.Lost != "" || !slices.Equal(tk.Changed, []string{"a/b/c/f.txt"}) || !slices.Equal(tk.Created, tk.Changed) {
		t.Fatalf("take = %+v", tk)
	}
	// The new folders are watched now: a later write is seen.
	os.WriteFile(filepath.Join(dir, "a", "b", "c", "f.txt"), []byte("y"), 0o644)
	os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "z"))
	tk = w.take()
	if !slices.Equal(tk.Changed, []string{"a/b/c/f.txt", "z/b/c/f.txt"}) || !slices.Equal(tk.Gone, []string{"a"}) || !slices.Equal(tk.Created, []string{"z/b/c/f.txt"}) {
		t.Fatalf("take after the rename = %+v", tk)
	}
	os.WriteFile(filepath.Join(dir, "z", "b", "g.txt"), []byte("y"), 0o644)
	if tk = w.take(); !slices.Equal(tk.Changed, []string{"z/b/g.txt"}) {
		t.Fatalf("take in the renamed folder = %+v", tk)
	}
}

// A file made and renamed over its target within one run (how editors and
// agent CLIs write) is no change of its own; the target is, and a file
// that existed before and was removed is too.
func TestTreeWatchTemporaryFileIsNoChange(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "div.sh"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("a"), 0o644)
	w, err := newTreeWatch(dir, watchSkip(dir, &spec.Loop{}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	os.WriteFile(filepath.Join(dir, "div.sh.tmp.1"), []byte("b"), 0o644)
	os.Rename(filepath.Join(dir, "div.sh.tmp.1"), filepath.Join(dir, "div.sh"))
	os.WriteFile(filepath.Join(dir, "scratch"), []byte("b"), 0o644)
	os.Remove(filepath.Join(dir, "scratch"))
	os.Remove(filepath.Join(dir, "old.txt"))
	tk := w.take()
	if tk.Lost != "" || !slices.Equal(tk.Changed, []string{"div.sh", "old.txt"}) {
		t.Fatalf("take = %+v, want div.sh and old.txt changed", tk)
	}
	// A rename onto a path counts as making it (the watch cannot tell
	// whether it existed); the temporary files are not listed at all.
	for _, p := range tk.Created {
		if p != "div.sh" {
			t.Fatalf("created = %v: %s was gone by the take", tk.Created, p)
		}
	}
}

// The kernel's word that its queue overflowed, read by the follower while
// a run goes on or at the take, makes the take say its lists are
// incomplete: the engine then walks.
func TestWatchOverflowIsLost(t *testing.T) {
	w, err := newTreeWatch(t.TempDir(), func(string, string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	w.follow()
	w.unfollow()
	w.event(-1, unix.IN_Q_OVERFLOW, "")
	if tk := w.take(); tk.Lost == "" {
		t.Fatal("an overflowed queue was not reported as lost")
	}
	if tk := w.take(); tk.Lost != "" {
		t.Fatalf("the next take is still lost: %s", tk.Lost)
	}
}
