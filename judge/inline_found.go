package judge

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/looprinter/looprinter/spec"
)

// InlineFound is a source file that holds tests inside it: Rust's
// #[cfg(test)] modules, or Python doctest examples a check runs. Each is
// protected as a test is (the rest of the file stays the agent's).
type InlineFound struct {
	Path  string // slash-separated, relative to the loop folder
	Count int    // test modules, or doctest examples
	Kind  string // "#[cfg(test)] module" or "doctest example"
}

// inlineSkipped are folders never read for inline tests: dependencies,
// build output, caches, git's and the engine's.
var inlineSkipped = map[string]bool{".git": true, "node_modules": true, "target": true, ".venv": true, "venv": true,
	"vendor": true, "__pycache__": true, "working-records": true, "build": true, "dist": true, ".tox": true}

// maxInlineWalk bounds the files looked at.
const maxInlineWalk = 20000

// InlineTests lists the files of dir that hold inline tests, sorted by
// path (for validate and init: they say what is protected inside files).
// A walk past maxInlineWalk files stops there; what it found is returned.
func InlineTests(dir string, l *spec.Loop) []InlineFound {
	doctests := RunsDoctests(l, dir)
	var out []InlineFound
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != dir && inlineSkipped[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > maxInlineWalk {
			return filepath.SkipAll
		}
		ext := filepath.Ext(p)
		if ext != ".rs" && (ext != ".py" || !doctests) || !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil || len(src) > 4<<20 {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		f := InlineFound{Path: filepath.ToSlash(rel), Kind: "#[cfg(test)] module", Count: len(InlineTestSpans(rel, src))}
		if ext == ".py" {
			f.Kind, f.Count = "doctest example", len(doctestSpans(src))
		}
		if f.Count > 0 {
			out = append(out, f)
		}
		return nil
	})
	sort.Slice(out, func(i, k int) bool { return out[i].Path < out[k].Path })
	return out
}
