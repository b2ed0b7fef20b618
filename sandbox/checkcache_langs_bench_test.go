//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// cacheLang is one language's check for BenchmarkCheckCacheLangs: the
// tree it runs in, its command, and the folders its view must read.
type cacheLang struct {
	name  string
	need  []string          // programs on PATH, else skipped
	setup func(tree string) // writes the tree
	line  func() string
	read  func() []string // more folders the checks read (the runners)
	// sources are the tree's files an agent's change touches: a warm
	// machine's run after a change (bare) builds them again, as a check
	// in a box always does.
	sources []string
}

// jsRunners is the folder of the pinned JavaScript test runners
// (scripts/install-js-runners.sh), "" where they are not installed.
func jsRunners() string {
	d := os.Getenv("LOOPRINTER_JS_RUNNERS")
	if d == "" {
		if wd, err := os.Getwd(); err == nil {
			d = filepath.Join(filepath.Dir(wd), ".cache", "js-runners")
		}
	}
	if _, err := os.Stat(filepath.Join(d, "node_modules", ".bin", "jest")); err != nil {
		return ""
	}
	return d
}

var cacheLangs = []cacheLang{
	{
		// Python: every module of the interpreter's own library a check
		// imports is compiled to bytecode under the check's own prefix,
		// unless the cache layer holds it.
		name: "python",
		need: []string{"python3"},
		setup: func(tree string) {
			os.WriteFile(filepath.Join(tree, "m.py"), []byte("import json, decimal, email.mime.text, http.client, xml.etree.ElementTree, argparse, asyncio, csv, statistics\n\ndef name(s):\n    return json.dumps(' '.join(s.split()))\n"), 0o644)
			os.WriteFile(filepath.Join(tree, "test_m.py"), []byte("import unittest\nimport m\n\nclass T(unittest.TestCase):\n    def test_name(self):\n        self.assertEqual(m.name('a  b'), '\"a b\"')\n"), 0o644)
		},
		line:    func() string { return "python3 -m unittest -q" },
		sources: []string{"m.py", "test_m.py"},
	},
	{
		// jest: its transform cache, kept below node_modules/.cache (its
		// default is the temporary folder, a check's own).
		name: "jest",
		need: []string{"node"},
		setup: func(tree string) {
			os.WriteFile(filepath.Join(tree, "package.json"), []byte(`{"name": "m", "version": "1.0.0"}`+"\n"), 0o644)
			os.WriteFile(filepath.Join(tree, "jest.config.js"), []byte("module.exports = { cacheDirectory: '<rootDir>/node_modules/.cache/jest', testEnvironment: 'node' };\n"), 0o644)
			os.MkdirAll(filepath.Join(tree, "node_modules", ".cache"), 0o755)
			os.WriteFile(filepath.Join(tree, "sum.js"), []byte("const sum = (a, b) => a + b;\nmodule.exports = { sum };\n"), 0o644)
			os.WriteFile(filepath.Join(tree, "sum.test.js"), []byte("const { sum } = require('./sum');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n"), 0o644)
		},
		line: func() string {
			return shellQuote(filepath.Join(jsRunners(), "node_modules", ".bin", "jest")) + " --ci --silent --config jest.config.js"
		},
		read:    func() []string { return []string{jsRunners()} },
		sources: []string{"sum.js", "sum.test.js"},
	},
	{
		// Rust: target/ in the tree (the crate's own units are compiled
		// again in every check: their freshness is a file's time).
		name: "rust",
		need: []string{"cargo"},
		setup: func(tree string) {
			os.WriteFile(filepath.Join(tree, "Cargo.toml"), []byte("[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"), 0o644)
			os.MkdirAll(filepath.Join(tree, "src"), 0o755)
			os.WriteFile(filepath.Join(tree, "src", "lib.rs"), []byte("pub fn name(s: &str) -> String {\n    s.split_whitespace().collect::<Vec<_>>().join(\" \")\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn name() {\n        assert_eq!(super::name(\"a  b\"), \"a b\");\n    }\n}\n"), 0o644)
		},
		line:    func() string { return "cargo test --offline -q" },
		sources: []string{filepath.Join("src", "lib.rs")},
	},
}

// BenchmarkCheckCacheLangs is BenchmarkCheckCache for a Python, a jest
// and a Rust check, under bubblewrap: each check in a box of its own as a
// gate's, without a cache layer (cold: the user's caches are not the
// check's, and a fresh machine has none) and with the loop's cache layer
// after the baseline's warm-up (layer), against the same command run
// unconfined after a warm-up run and a change to the tree's sources (bare:
// a warm machine, after an agent's change). It reports the
// medians in ms, layer/bare (target: at most 1.2) and cold/layer. A
// language whose tools are not here is skipped. Run with -benchtime Nx.
func BenchmarkCheckCacheLangs(b *testing.B) {
	need(b, Bwrap)
	needLayers(b)
	for _, lang := range cacheLangs {
		b.Run(lang.name, func(b *testing.B) {
			for _, p := range lang.need {
				if _, err := exec.LookPath(p); err != nil {
					b.Skipf("no %s here", p)
				}
			}
			if lang.name == "jest" && jsRunners() == "" {
				b.Skip("no JavaScript test runners here (scripts/install-js-runners.sh)")
			}
			root, _ := filepath.EvalSymlinks(b.TempDir())
			tree := filepath.Join(root, "tree")
			os.MkdirAll(tree, 0o755)
			lang.setup(tree)
			line := lang.line()
			env := os.Environ()
			var view ViewSpec
			if lang.read != nil {
				view.AllowRead = lang.read()
			}
			bare := func() time.Duration {
				start := time.Now()
				cmd := exec.Command("/bin/sh", "-c", line)
				cmd.Dir, cmd.Env = tree, env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bare: %v: %s", err, out)
				}
				return time.Since(start)
			}
			box := func(c *CheckCache) time.Duration {
				start := time.Now()
				bx, err := NewCheckBox(CheckBoxOptions{Kind: Bwrap, Tree: tree, Env: env, Hide: []string{filepath.Join(root, "state")}, Scratch: root, Cache: c, View: view})
				if err != nil {
					b.Fatal(err)
				}
				defer bx.Close()
				cmd, cleanup, err := bx.Command(context.Background(), tree, line, env)
				if err != nil {
					b.Fatal(err)
				}
				out, err := cmd.CombinedOutput()
				cleanup()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				return time.Since(start)
			}
			layer := &CheckCache{Dir: filepath.Join(root, "state", "cache")}
			start := time.Now()
			box(&CheckCache{Dir: layer.Dir, Warm: true})
			if err := FinishCacheWarm(*layer, env, tree); err != nil {
				b.Fatal(err)
			}
			warmUp := time.Since(start)
			// What a bare run left in the tree (the boxes wrote their
			// layers) is not the next run's.
			clean := func() {
				for _, d := range []string{"target", filepath.Join("node_modules", ".cache", "jest"), "__pycache__"} {
					os.RemoveAll(filepath.Join(tree, d))
				}
			}
			clean()
			times := map[string][]time.Duration{}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				times["cold"] = append(times["cold"], box(nil))
				times["layer"] = append(times["layer"], box(layer))
				bare() // the warm machine: what the last bare run left, then a change
				now := time.Now()
				for _, f := range lang.sources {
					os.Chtimes(filepath.Join(tree, f), now, now)
				}
				times["bare"] = append(times["bare"], bare())
				clean()
			}
			b.StopTimer()
			ms := func(k string) float64 {
				d := append([]time.Duration(nil), times[k]...)
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			for _, k := range []string{"cold", "layer", "bare"} {
				b.ReportMetric(ms(k), k+"-ms")
			}
			b.ReportMetric(float64(warmUp.Microseconds())/1000, "warmup-ms")
			b.ReportMetric(ms("layer")/ms("bare"), "layer/bare")
			b.ReportMetric(ms("cold")/ms("layer"), "cold/layer")
		})
	}
}
