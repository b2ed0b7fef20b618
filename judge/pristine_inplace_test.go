package judge

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A run that writes the folder in place: what differs from the listing
// taken before it under the dependency folders and caches is left out of
// the clean room, and nothing else.
func TestPristineInPlace(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("node_modules/a/index.js", "a")
	write("node_modules/b/index.js", "b")
	write(".venv/lib/site-packages/keep.py", "k")
	write(".venv/lib/site-packages/gone.py", "g")
	write("src/main.js", "m")
	p := OpenPristine(dir)
	if rm, put, ch := p.View(); len(rm)+len(put)+len(ch) != 0 || p.Err() != nil {
		t.Fatalf("no listing yet: %v %v %v %v", rm, put, ch, p.Err())
	}
	if err := p.Listing(); err != nil {
		t.Fatal(err)
	}
	if rm, _, ch := p.View(); len(rm)+len(ch) != 0 || p.Err() != nil {
		t.Fatalf("nothing changed: %v %v %v", rm, ch, p.Err())
	}
	time.Sleep(10 * time.Millisecond)
	write("node_modules/.bin/node", "#!/bin/sh\necho ok\n")          // new
	write("node_modules/a/index.js", "A")                            // changed in place, same size
	os.Remove(filepath.Join(dir, ".venv/lib/site-packages/gone.py")) // removed
	write(".venv/lib/site-packages/zz.pth", "import os")             // new
	write("src/main.js", "changed")                                  // not a dependency
	write("src/__pycache__/x.pyc", "c")                              // a cache: new
	// A second listing call keeps the first.
	if err := p.Listing(); err != nil {
		t.Fatal(err)
	}
	rm, put, ch := OpenPristine(dir).View()
	want := []string{".venv/lib/site-packages/gone.py", ".venv/lib/site-packages/zz.pth", "node_modules/.bin/node", "node_modules/a/index.js", "src/__pycache__/x.pyc"}
	if !slices.Equal(rm, want) || !slices.Equal(ch, want) || len(put) != 0 {
		t.Fatalf("remove %v changed %v put %v, want %v", rm, ch, put, want)
	}
	// A path the record kept an original of stays as the record says.
	q := OpenPristine(dir)
	q.m["node_modules/a/index.js"] = "kept"
	os.MkdirAll(filepath.Join(q.root, "files", "node_modules", "a"), 0o700)
	os.WriteFile(filepath.Join(q.root, "files", "node_modules", "a", "index.js"), []byte("a"), 0o600)
	rm, put, _ = q.View()
	if slices.Contains(rm, "node_modules/a/index.js") || len(put) != 1 || put[0].To != "node_modules/a/index.js" {
		t.Fatalf("kept original: remove %v put %v", rm, put)
	}
	// A listing that cannot be read fails the comparison, never passes it.
	os.WriteFile(p.listingPath(), []byte("{"), 0o600)
	OpenPristine(dir).View()
	r := OpenPristine(dir)
	r.View()
	if r.Err() == nil {
		t.Fatal("a corrupt listing is not an error")
	}
}
