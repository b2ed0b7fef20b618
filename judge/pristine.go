package judge

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// The clean room runs on a pristine tree: besides the runner files the
// agent added, it leaves out bytecode and runner caches, and sees the
// dependency folders (node_modules, .venv, vendor, site-packages…) as they
// were when the loop started. The engine learns every path an agent run
// changed there when it applies the run's layer (O(changes)): before a
// file there is first replaced or removed, its original is kept in the
// private folder (Pristine.Keep); a path that did not exist is noted as
// new. The clean room then puts the originals back in its view and leaves
// the new paths out. Skipped for speed never means trusted.

// dependencyDirs are folders of installed dependencies: code a check runs
// that the loop's own tests never name.
var dependencyDirs = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, "vendor": true,
	"site-packages": true, "__pypackages__": true, ".tox": true, ".nox": true,
}

// cacheDirs are runner and bytecode caches: nothing in them is the loop's.
var cacheDirs = map[string]bool{
	"__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true,
	".jest-cache": true, ".vitest": true, ".cache": true, ".nyc_output": true,
}

// Pristine says whether the clean room keeps rel as it was at the loop's
// start: a path in a dependency folder or a cache, or a bytecode file.
func PristinePath(rel string) bool {
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(rel, ".pyc") || strings.HasSuffix(rel, ".pyo") {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if dependencyDirs[part] || cacheDirs[part] {
			return true
		}
	}
	return false
}

// Pristine is the engine's record of what agent runs changed under the
// pristine paths of one loop folder.
type Pristine struct {
	dir  string // the loop folder
	root string // its private pristine folder
	mu   sync.Mutex
	m    map[string]string // rel → "kept" (original saved) | "new" (absent at the start) | "lost" (changed in place, original unknown)
	err  error             // the last View's comparison with the start's listing
}

// Err is why the last View could not compare the folder with the listing
// of its dependency folders at the loop's start (nil: it could, or there
// is none).
func (p *Pristine) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// OpenPristine reads the loop's pristine record (empty when none).
func OpenPristine(dir string) *Pristine {
	p := &Pristine{dir: dir, root: loopdir.PrivateOf(dir).Pristine(), m: map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(p.root, "manifest.json")); err == nil {
		json.Unmarshal(data, &p.m)
	}
	return p
}

// Keep notes that an agent run is about to replace or remove rel in the
// loop folder: the first time, the original is copied aside (a path that
// does not exist is noted as new). Later changes of the same path keep the
// first original: the loop's start is what counts.
func (p *Pristine) Keep(rel string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, seen := p.m[rel]; seen {
		return nil
	}
	src := filepath.Join(p.dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(src)
	switch {
	case errors.Is(err, os.ErrNotExist):
		p.m[rel] = "new"
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		to := filepath.Join(p.root, "files", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if err := sandbox.CopyFile(src, filepath.Join(p.root, "files", filepath.FromSlash(rel)), fi.Mode().Perm()); err != nil {
			return err
		}
		p.m[rel] = "kept"
	default:
		p.m[rel] = "lost" // a folder or a link: left out of the clean room
	}
	return p.save()
}

// Lost notes paths a run changed in place where no layer kept the
// originals (Landlock, off): new ones are left out of the clean room, and
// changed ones too (their originals are not known).
func (p *Pristine) Lost(created, changed []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	isNew := map[string]bool{}
	for _, c := range created {
		isNew[c] = true
	}
	n := 0
	for _, rel := range changed {
		if !PristinePath(rel) {
			continue
		}
		if _, seen := p.m[rel]; seen {
			continue
		}
		if isNew[rel] {
			p.m[rel] = "new"
		} else {
			p.m[rel] = "lost"
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return p.save()
}

func (p *Pristine) save() error {
	if err := os.MkdirAll(p.root, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(p.m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(p.root, "manifest.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(p.root, "manifest.json"))
}

// View is what the clean room changes in its view of the loop folder: the
// paths to leave out (new ones, and ones whose original is unknown) and
// the originals to put back; changed names the paths, sorted, for the
// records.
// Where runs wrote the folder in place, the paths that differ from the
// listing taken before the first of them are added (see inPlace); Err
// says when that comparison failed.
func (p *Pristine) View() (remove []string, put []sandbox.ViewFile, changed []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.m
	inPlace, err := p.inPlace()
	p.err = err
	if len(inPlace) > 0 {
		m = make(map[string]string, len(p.m)+len(inPlace))
		for rel, how := range inPlace {
			m[rel] = how
		}
		for rel, how := range p.m {
			m[rel] = how
		}
	}
	for rel, how := range m {
		changed = append(changed, rel)
		switch how {
		case "kept":
			from := filepath.Join(p.root, "files", filepath.FromSlash(rel))
			fi, err := os.Stat(from)
			if err != nil {
				remove = append(remove, rel)
				continue
			}
			put = append(put, sandbox.ViewFile{From: from, To: rel, Mode: fi.Mode().Perm()})
		default:
			remove = append(remove, rel)
		}
	}
	sort.Strings(remove)
	sort.Strings(changed)
	sort.Slice(put, func(i, k int) bool { return put[i].To < put[k].To })
	return remove, put, changed
}
