package loop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/shlex"
)

// skipDirs are never walked for protection or change detection.
var skipDirs = map[string]bool{".git": true, RecordsDir: true, "node_modules": true, ".cache": true}

// maxWalk bounds the walks over the loop folder; past it a run fails closed.
const maxWalk = 1000000

// protectedSet is the contents of every protected file before an agent run.
type protectedSet struct {
	dir      string
	patterns []string
	files    map[string][]byte // relative path → contents; nil for "did not exist"
}

// protectPatterns returns the user's globs plus the defaults: the loop file
// and every script named by a gate.
func protectPatterns(dir, loopFile string, globs []string, defaults bool, gateCmds []string) []string {
	pats := append([]string{}, globs...)
	if defaults {
		if rel, err := filepath.Rel(dir, loopFile); err == nil && !strings.HasPrefix(rel, "..") {
			pats = append(pats, rel)
		}
		for _, cmd := range gateCmds {
			words, err := shlex.Split(cmd)
			if err != nil {
				continue
			}
			for i, w := range words {
				p := w
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && isScriptWord(words, i, st) {
					if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
						pats = append(pats, filepath.ToSlash(rel))
					}
				}
			}
		}
	}
	sort.Strings(pats)
	out := pats[:0]
	for i, p := range pats {
		if i == 0 || p != pats[i-1] {
			out = append(out, p)
		}
	}
	return out
}

// interpreters run the script named by their first argument.
var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"python": true, "python3": true, "node": true, "ruby": true, "perl": true, "php": true, "lua": true,
	"deno": true, "bun": true, "tclsh": true, "pwsh": true, "Rscript": true, "source": true, ".": true}

var scriptExts = map[string]bool{".sh": true, ".bash": true, ".zsh": true, ".py": true, ".js": true, ".mjs": true,
	".cjs": true, ".ts": true, ".rb": true, ".pl": true, ".php": true, ".lua": true, ".tcl": true, ".ps1": true}

// isScriptWord tells whether words[i], an existing file, is a script the
// gate runs (the command itself, an interpreter's argument, an executable or
// a script by its extension) rather than data the gate reads, such as the
// deliverable a check compares: protecting that would undo the agent's work.
func isScriptWord(words []string, i int, fi os.FileInfo) bool {
	if i == 0 || fi.Mode()&0o111 != 0 || scriptExts[filepath.Ext(words[i])] {
		return true
	}
	switch prev := words[i-1]; prev {
	case "&&", "||", ";", "|":
		return true
	default:
		return interpreters[filepath.Base(prev)]
	}
}

func matchProtected(dir string, patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	return matchGlobs(dir, patterns)
}

// ErrTooManyFiles says a folder holds more files than the engine inspects.
// It fails closed: the run stops, nothing is skipped silently.
var ErrTooManyFiles = fmt.Errorf("the loop folder holds more than %d files; the engine does not judge a run it cannot fully inspect (move build output or dependencies out, or add them to .gitignore-style skip folders)", maxWalk)

// walkFiles calls fn for every file under dir (slash-separated relative
// paths), skipping skipDirs. Past maxWalk files it stops with
// ErrTooManyFiles.
func walkFiles(dir string, fn func(rel string, d fs.DirEntry)) error {
	n := 0
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
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
	File string
	What string // modified | deleted | created | replaced … | changed from mode …
	Rule string // the rule that protects it
	Why  string // for the loop file: what the change weakened
}

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
