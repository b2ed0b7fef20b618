package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/looprinter/looprinter/loopdir"
)

// skipDirs are never walked for protection or change detection.
var skipDirs = map[string]bool{".git": true, loopdir.RecordsDir: true, "node_modules": true, ".cache": true}

// maxWalk bounds the walks over the loop folder; past it a run fails closed.
// A variable only so that a test can lower it.
var maxWalk = 1000000

// ErrTooManyFiles says a folder holds more files than the engine inspects.
// It fails closed: the run stops, nothing is skipped silently. A folder it
// cannot read stops the walk too.
var ErrTooManyFiles = fmt.Errorf("the loop folder holds more than %d files; the engine does not judge a run it cannot fully inspect (move build output or dependencies out, or add them to .gitignore-style skip folders)", maxWalk)

// walkFiles calls fn for every file under dir (slash-separated relative
// paths), skipping skipDirs. Past maxWalk files it stops with
// ErrTooManyFiles.
func walkFiles(dir string, fn func(rel string, d fs.DirEntry)) error {
	n := 0
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir {
				return nil // removed while walked
			}
			return fmt.Errorf("cannot read %s: %w", filepath.ToSlash(rel), err)
		}
		if d.IsDir() {
			if rel != "." && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > maxWalk {
			return ErrTooManyFiles
		}
		fn(filepath.ToSlash(rel), d)
		return nil
	})
}

// Tamper is one protected file the agent changed.
type Tamper struct {
	// Kind is "" for a protected file, TestAware for a change refused
	// because its code asks whether it runs under a test or forges a
	// runner's output (the judge's tells).
	Kind string
	File string
	What string // modified | deleted | created | replaced … | changed from mode …
	Rule string // the rule that protects it
	Why  string // for the loop file: what the change weakened
}

// TestAware is the Tamper kind of a change refused for its tells.
const TestAware = "test_aware_code"

// fileStamp is what change detection compares.
type fileStamp struct {
	size  int64
	mtime int64
}

// treeStamps records size and mtime of every file, to list what an agent run
// changed without reading file contents.
func treeStamps(dir string) (map[string]fileStamp, error) {
	out := map[string]fileStamp{}
	err := walkFiles(dir, func(rel string, d fs.DirEntry) {
		if info, err := d.Info(); err == nil {
			out[rel] = fileStamp{info.Size(), info.ModTime().UnixNano()}
		}
	})
	return out, err
}

func changedFiles(before, after map[string]fileStamp) []string {
	var out []string
	for p, a := range after {
		if b, ok := before[p]; !ok || b != a {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
