package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// A CheckCache is a loop's trusted cache layer: the build caches checks
// write in HOME (Go's build and module caches, npm's, pip's, a bytecode
// prefix for the interpreter's own library) and the build outputs a
// runner keeps in the tree (target/, node_modules/.cache, .pytest_cache…),
// kept in Dir, a folder of the engine's private state that no check and no
// agent sees.
//
// Without Warm it is laid read-only under every check's throw-away layers
// (bwrap: a lower folder of each layer; Landlock: Go's build cache copied
// into the box's own, the bytecode prefix read-only): what a check writes
// there is gone with the check, and Dir is never written.
//
// With Warm the box's checks write their caches into Dir (bwrap: the upper
// folders of their layers over HOME, the caches and the tree). Only
// trusted work may run in such a box: the warm-up, the checks run on the
// pristine tree before any agent run. FinishCacheWarm then keeps only the
// caches of what it wrote.
type CheckCache struct {
	Dir  string
	Warm bool
}

// The folders of a cache layer's Dir.
const (
	cacheHomeDir  = "home"     // home/<hash of a target>/{u,w,target}: bwrap, HOME and the caches
	cacheTreeDir  = "tree"     // tree/{u,w}: bwrap, the build outputs in the tree
	cacheLandlock = "landlock" // landlock/{gocache,pycache}
)

// cacheTreeOutputs are the build outputs a runner keeps in the tree that
// the cache layer keeps (relative to the tree); everything else a warm-up
// wrote in the tree is dropped. jest's default cache is in the temporary
// folder, which is a check's own: set `cacheDirectory` to a folder below
// node_modules/.cache to keep it.
var cacheTreeOutputs = []string{
	"target",              // cargo (units whose freshness is read from mtimes are dropped: pruneCargo)
	"node_modules/.cache", // babel, jest with cacheDirectory there, eslint, webpack loaders
	"node_modules/.vite",  // vitest's cache
	"node_modules/.vitest",
	".pytest_cache",
}

// cacheTargetDir is the folder of the cache layer for a layer's target
// (HOME, a cache folder or the tree).
func (c *CheckCache) targetDir(target, tree string) string {
	if target == tree {
		return filepath.Join(c.Dir, cacheTreeDir)
	}
	h := sha256.Sum256([]byte(target))
	return filepath.Join(c.Dir, cacheHomeDir, hex.EncodeToString(h[:8]))
}

// GoModCache is where Go's module cache is: GOMODCACHE, else the first
// GOPATH's pkg/mod, else HOME's go/pkg/mod.
func GoModCache(get func(string) string, home string) string {
	if v := get("GOMODCACHE"); filepath.IsAbs(v) {
		return v
	}
	if v := get("GOPATH"); v != "" {
		if first := filepath.SplitList(v)[0]; filepath.IsAbs(first) {
			return filepath.Join(first, "pkg", "mod")
		}
	}
	if filepath.IsAbs(home) {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}
