package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Checks that start warm. Every check runs with throw-away layers, so
// what it compiles is gone with it; each loop has instead a cache layer of
// its own (sandbox.CheckCache, in the engine's private folder) laid
// read-only under every check, the clean room's, the holdout's and each
// mutant's. It is written by one thing only: the baseline's run of the
// checks, on the tree the loop starts with, before any agent run (the
// warm-up). A check's writes go to its own throw-away layer as before, so
// no code the agent wrote can put anything in it. It is refreshed at the
// baseline when its key — the lockfiles and the toolchains' versions —
// changed since it was made.

// warmUpKey marks a context whose checks fill the cache layer.
type warmUpKey struct{}

// warmUp is the warm-up in progress: the folder it fills and the trees
// its boxes ran on (the loop folder, or a copy of it).
type warmUp struct {
	dir   string
	mu    sync.Mutex
	trees []string
}

// cacheLockfiles are the files, at the top of the tree, whose change
// makes the cache layer stale (with requirements*.txt).
var cacheLockfiles = []string{"go.sum", "go.mod", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "poetry.lock", "uv.lock", "Pipfile.lock"}

// cacheToolchains are the toolchains whose version is in the key, each
// asked only when a file of its ecosystem is at the top of the tree.
var cacheToolchains = []struct {
	markers []string
	cmd     []string
}{
	{[]string{"go.mod"}, []string{"go", "env", "GOVERSION"}},
	{[]string{"package.json"}, []string{"node", "--version"}},
	{[]string{"Cargo.toml"}, []string{"rustc", "--version"}},
	{[]string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"}, []string{"python3", "--version"}},
}

// cacheKey is the key of the cache layer for the tree with env under
// kind: what the layer's content depends on, one line each.
func cacheKey(tree, kind string, env []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind %s\nuid %d\nhome %s\n", kind, os.Getuid(), lookup(env, "HOME"))
	for _, k := range []string{"GOCACHE", "GOFLAGS", "XDG_CACHE_HOME", "CARGO_HOME", "npm_config_cache", "PIP_CACHE_DIR"} {
		fmt.Fprintf(&b, "env %s=%s\n", k, lookup(env, k))
	}
	locks := append([]string{}, cacheLockfiles...)
	if m, _ := filepath.Glob(filepath.Join(tree, "requirements*.txt")); len(m) > 0 {
		for _, p := range m {
			locks = append(locks, filepath.Base(p))
		}
	}
	sort.Strings(locks)
	for _, f := range locks {
		if data, err := os.ReadFile(filepath.Join(tree, f)); err == nil {
			h := sha256.Sum256(data)
			fmt.Fprintf(&b, "lock %s %s\n", f, hex.EncodeToString(h[:]))
		}
	}
	for _, tc := range cacheToolchains {
		for _, m := range tc.markers {
			if _, err := os.Stat(filepath.Join(tree, m)); err == nil {
				fmt.Fprintf(&b, "tool %s %s\n", tc.cmd[0], toolVersion(env, tc.cmd))
				break
			}
		}
	}
	return b.String()
}

// toolVersion is what a toolchain's version command prints ("none" when
// it cannot run).
func toolVersion(env, cmd []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Env = env
	out, err := c.Output()
	if err != nil {
		return "none"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

func lookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// warmUp starts the warm-up of the loop's cache layer for the baseline's
// checks when the layer is missing or its key changed: the context the
// checks run with, and done, called once they all ended, which keeps the
// caches of what they wrote and puts them in place. When the layer is
// current, the context is ctx: the baseline's checks read it like any.
func (j *Judge) warmUp(ctx context.Context, l *spec.Loop, env []string) (context.Context, func()) {
	kind, _ := checkKind(l)
	p := loopdir.PrivateOf(l.Dir)
	if kind == sandbox.Off || !dirExists(string(p)) {
		return ctx, func() {}
	}
	root := p.CheckCache()
	key := cacheKey(l.Dir, kind, env)
	if cur, err := os.ReadFile(filepath.Join(root, "key")); err == nil && string(cur) == key && dirExists(filepath.Join(root, "layer")) {
		return ctx, func() {}
	}
	w := &warmUp{dir: filepath.Join(root, "warming")}
	if sandbox.RemoveCache(w.dir) != nil || os.MkdirAll(w.dir, 0o700) != nil {
		return ctx, func() {}
	}
	return context.WithValue(ctx, warmUpKey{}, w), func() {
		if ctx.Err() != nil {
			sandbox.RemoveCache(w.dir) // the baseline runs again, and so does the warm-up
			return
		}
		if err := j.finishWarmUp(w, root, key, env); err != nil {
			sandbox.RemoveCache(w.dir)
			j.addNotVerified("checks: the cache layer could not be made (checks start cold): " + err.Error())
		}
	}
}

// finishWarmUp keeps the caches the warm-up wrote and puts them in place
// of the layer, with key. The key goes last: a layer without its key is
// never laid.
func (j *Judge) finishWarmUp(w *warmUp, root, key string, env []string) error {
	w.mu.Lock()
	trees := append([]string{j.Dir}, w.trees...)
	w.mu.Unlock()
	for _, t := range trees {
		if err := sandbox.FinishCacheWarm(sandbox.CheckCache{Dir: w.dir}, env, t); err != nil {
			return err
		}
	}
	layer := filepath.Join(root, "layer")
	if err := os.Remove(filepath.Join(root, "key")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := sandbox.RemoveCache(layer); err != nil {
		return err
	}
	if err := os.Rename(w.dir, layer); err != nil {
		return err
	}
	return j.writeFile(filepath.Join(root, "key"), []byte(key))
}

// checkCacheFor is the cache layer of a box of l's checks over tree: the
// warm-up's folder, writable, when ctx is the warm-up's and tree is the
// loop folder; else the layer, read-only, when there is one.
func checkCacheFor(ctx context.Context, l *spec.Loop, tree string) *sandbox.CheckCache {
	if w, _ := ctx.Value(warmUpKey{}).(*warmUp); w != nil && filepath.Clean(tree) == filepath.Clean(l.Dir) {
		return &sandbox.CheckCache{Dir: w.dir, Warm: true}
	}
	return checkCache(l)
}

// noteWarmTree notes the tree a warm box ran on (the loop folder or a copy
// of it): the warm-up's bytecode of its sources is dropped.
func noteWarmTree(ctx context.Context, tree string) {
	if w, _ := ctx.Value(warmUpKey{}).(*warmUp); w != nil {
		w.mu.Lock()
		w.trees = append(w.trees, tree)
		w.mu.Unlock()
	}
}

// checkCache is l's cache layer, read-only (nil when there is none).
func checkCache(l *spec.Loop) *sandbox.CheckCache {
	root := loopdir.PrivateOf(l.Dir).CheckCache()
	if _, err := os.Stat(filepath.Join(root, "key")); err != nil {
		return nil
	}
	if layer := filepath.Join(root, "layer"); dirExists(layer) {
		return &sandbox.CheckCache{Dir: layer}
	}
	return nil
}
