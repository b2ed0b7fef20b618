package judge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// The cache layer's key changes with a lockfile and with nothing else of
// the tree.
func TestCacheKeyLockfiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.sum"), []byte("a v1 h1:x\n"), 0o644)
	env := []string{"HOME=/h"}
	k := cacheKey(dir, "bwrap", env)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	if cacheKey(dir, "bwrap", env) != k {
		t.Fatal("a source file changed the key")
	}
	os.WriteFile(filepath.Join(dir, "go.sum"), []byte("a v2 h1:y\n"), 0o644)
	if cacheKey(dir, "bwrap", env) == k {
		t.Fatal("go.sum changed and the key did not")
	}
	k = cacheKey(dir, "bwrap", env)
	os.WriteFile(filepath.Join(dir, "requirements-dev.txt"), []byte("pytest\n"), 0o644)
	if cacheKey(dir, "bwrap", env) == k || cacheKey(dir, "landlock", env) == cacheKey(dir, "bwrap", env) {
		t.Fatal("requirements-dev.txt or the kind did not change the key")
	}
}

// Only the warm-up's context over the loop folder writes the cache layer;
// every other box gets it read-only, and only once it has its key.
func TestCheckCacheForWarmOnlyAtWarmUp(t *testing.T) {
	dir := t.TempDir()
	l := &spec.Loop{Dir: dir}
	if c := checkCacheFor(context.Background(), l, dir); c != nil {
		t.Fatalf("no layer yet, got %+v", c)
	}
	ctx := context.WithValue(context.Background(), warmUpKey{}, &warmUp{dir: "/w"})
	if c := checkCacheFor(ctx, l, dir); c == nil || !c.Warm || c.Dir != "/w" {
		t.Fatalf("the warm-up over the loop folder: %+v", c)
	}
	if c := checkCacheFor(ctx, l, t.TempDir()); c != nil && c.Warm {
		t.Fatal("a box over another tree warmed the layer")
	}
	root := loopdir.PrivateOf(dir).CheckCache()
	os.MkdirAll(filepath.Join(root, "layer"), 0o700)
	if c := checkCacheFor(context.Background(), l, dir); c != nil {
		t.Fatal("a layer without its key was laid")
	}
	os.WriteFile(filepath.Join(root, "key"), []byte("k"), 0o600)
	if c := checkCacheFor(context.Background(), l, dir); c == nil || c.Warm || c.Dir != filepath.Join(root, "layer") {
		t.Fatalf("the layer, read-only: %+v", c)
	}
}
