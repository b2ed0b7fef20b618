//go:build linux

package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheLine writes, as a warm-up's checks would, an entry in Go's build
// cache, junk in HOME, a build output in the tree and a report beside it.
const cacheWarmLine = `g=${GOCACHE:-$HOME/.cache/go-build}; mkdir -p "$g" && echo warm > "$g/entry"
echo junk > "$HOME/junk"
mkdir -p target 2>/dev/null && echo built > target/out 2>/dev/null
echo report > report.txt 2>/dev/null; true`

// The agent's code, run by a check, poisons the cache: the entry replaced,
// a new one, the build output in the tree.
const cachePoisonLine = `g=${GOCACHE:-$HOME/.cache/go-build}; echo poison > "$g/entry"; echo poison > "$g/poison"
echo poison > target/out 2>/dev/null; true`

const cacheReadLine = `g=${GOCACHE:-$HOME/.cache/go-build}; echo "entry=$(cat "$g/entry" 2>&1)"; echo "poison=$(cat "$g/poison" 2>/dev/null)"
echo "out=$(cat target/out 2>/dev/null)"; echo "junk=$(cat "$HOME/junk" 2>/dev/null)"`

// A box that warms the cache layer fills it (and not the user's HOME);
// only the caches stay. Boxes that lay it read-only start warm, and what a
// check writes there — the agent's code poisoning an entry — never reaches
// the layer, a later box or (bwrap) a later check of the same box.
func TestCheckBoxCacheLayer(t *testing.T) {
	for _, kind := range confinedKinds {
		t.Run(kind, func(t *testing.T) {
			f := newBoxFixture(t)
			c := CheckCache{Dir: filepath.Join(f.priv, "engine", "cache")}
			warm := c
			warm.Warm = true
			b := f.box(t, kind, CheckBoxOptions{Cache: &warm})
			if out, code := runBox(t, b, f.tree, cacheWarmLine, f.env); code != 0 {
				t.Fatalf("warm-up: exit %d: %s", code, out)
			}
			b.Close()
			if err := FinishCacheWarm(c, f.env, f.tree); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(f.home, ".cache", "go-build", "entry")); err == nil {
				t.Fatal("the warm-up wrote the user's own cache")
			}
			if got := filesUnder(t, c.Dir); strings.Contains(got, "junk") || strings.Contains(got, "report.txt") || !strings.Contains(got, "entry") {
				t.Fatalf("the cache layer should keep the build cache only, it holds:\n%s", got)
			}

			for round := 0; round < 2; round++ {
				b := f.box(t, kind, CheckBoxOptions{Cache: &c})
				out, _ := runBox(t, b, f.tree, cacheReadLine, f.env)
				if !strings.Contains(out, "entry=warm") || strings.Contains(out, "poison=poison") || strings.Contains(out, "junk=junk") {
					t.Fatalf("round %d: a check should start with the warm-up's cache and nothing else: %s", round, out)
				}
				if kind == Bwrap && !strings.Contains(out, "out=built\n") {
					t.Fatalf("round %d: the tree's build output should come from the cache layer: %s", round, out)
				}
				runBox(t, b, f.tree, cachePoisonLine, f.env)
				if kind == Bwrap {
					if out, _ := runBox(t, b, f.tree, cacheReadLine, f.env); !strings.Contains(out, "entry=warm") || strings.Contains(out, "=poison") {
						t.Fatalf("round %d: a later check of the same box read the poison: %s", round, out)
					}
				}
				b.Close()
				if got := contentsUnder(t, c.Dir); strings.Contains(got, "poison") {
					t.Fatalf("round %d: a check wrote the cache layer:\n%s", round, got)
				}
			}
			if _, err := os.Stat(filepath.Join(f.tree, "target")); err == nil {
				t.Fatal("a check wrote the tree")
			}
		})
	}
}

// Of what a warm-up wrote, FinishCacheWarm keeps the caches only: no
// bytecode of the tree's sources, no cargo unit whose freshness is a
// file's time, no whiteout, nothing outside the kept folders.
func TestFinishCacheWarmKeepsCachesOnly(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home, tree := filepath.Join(root, "home"), filepath.Join(root, "tree")
	env := []string{"HOME=" + home}
	c := CheckCache{Dir: filepath.Join(root, "cache")}
	hd := c.targetDir(home, tree)
	u, tu := filepath.Join(hd, "u"), filepath.Join(c.Dir, cacheTreeDir, "u")
	pre := filepath.Join(".cache", "looprinter-pycache")
	files := map[string]string{
		filepath.Join(u, ".cache", "go-build", "ab", "x-d"):                               "keep",
		filepath.Join(u, ".npm", "_cacache", "x"):                                         "keep",
		filepath.Join(u, pre, "usr", "lib", "python3", "x.pyc"):                           "keep",
		filepath.Join(u, pre, tree, "mod.pyc"):                                            "drop",
		filepath.Join(u, ".bashrc"):                                                       "drop",
		filepath.Join(u, ".cache", "other", "x"):                                          "drop",
		filepath.Join(tu, "target", "debug", ".fingerprint", "serde-1", "lib-serde.json"): `{"local":[{"Precalculated":"1.0"}]}`,
		filepath.Join(tu, "target", "debug", ".fingerprint", "mine-2", "lib-mine.json"):   `{"local":[{"CheckDepInfo":{"dep_info":"x"}}]}`,
		filepath.Join(tu, "target", "debug", "deps", "libserde.rlib"):                     "keep",
		filepath.Join(tu, ".pytest_cache", "v", "x"):                                      "keep",
		filepath.Join(tu, "src", "main.go"):                                               "drop",
		filepath.Join(tu, "coverage.out"):                                                 "drop",
	}
	for p, s := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(hd, "target"), []byte(home), 0o600)
	if err := FinishCacheWarm(c, env, tree); err != nil {
		t.Fatal(err)
	}
	for p, s := range files {
		_, err := os.Stat(p)
		want := s != "drop" && !strings.Contains(s, "CheckDepInfo")
		if (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", p, err == nil, want)
		}
	}
}

// filesUnder lists the files under dir, one a line.
func filesUnder(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b.WriteString(p + "\n")
		}
		return nil
	})
	return b.String()
}

// contentsUnder is every regular file under dir with its content.
func contentsUnder(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + ": " + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}
