package wave

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// A prefix's tree: the change the applies of a wave's runs 0..k (in plan
// order) make to the loop folder when each lands whole, built from their
// layers alone, before any is applied, so that run k's checks can run on
// it at once with the others' (the engine's speculative judging). Each
// layer's files are taken as Merger.Prepare takes them: a file only one
// run wrote is that run's, a file two runs wrote is merged three ways
// against the folder's. What cannot be told without the applies (a
// removal, a replaced folder, a link, a file too large to merge, a
// conflict) builds no tree: the run is judged after its apply.

// Prefix is a prefix's tree, not laid yet.
type Prefix struct {
	files map[string]prefixFile
	dirs  map[string]os.FileMode
}

type prefixFile struct {
	data []byte
	perm os.FileMode
}

// SimulatePrefix builds the tree the applies of uppers (the runs' layers,
// in plan order) leave over dir. skip says which paths of an upper no
// apply takes (the engine's own, the hidden ones); tmp is a scratch
// folder for the merges. false: no tree can be told.
func SimulatePrefix(ctx context.Context, dir string, uppers []string, skip func(upper, rel string) bool, tmp string) (*Prefix, bool) {
	p := &Prefix{files: map[string]prefixFile{}, dirs: map[string]os.FileMode{}}
	if os.MkdirAll(tmp, 0o700) != nil {
		return nil, false
	}
	for _, upper := range uppers {
		entries, err := sandbox.LayerEntries(upper)
		if err != nil {
			return nil, false
		}
		for _, en := range entries {
			rel := en.Rel
			if skip(upper, rel) {
				continue
			}
			switch en.What {
			case "folder":
				if _, f := p.files[rel]; f {
					return nil, false
				}
				if _, ok := p.dirs[rel]; !ok {
					p.dirs[rel] = en.Mode.Perm()
				}
				continue
			case "written":
			default:
				return nil, false
			}
			if _, d := p.dirs[rel]; d {
				return nil, false
			}
			mine := ReadBase(filepath.Join(upper, filepath.FromSlash(rel)))
			if mine.Other || mine.Absent {
				return nil, false
			}
			cur, seen := p.files[rel]
			if !seen {
				p.files[rel] = prefixFile{mine.Data, en.Mode.Perm()}
				continue
			}
			// An earlier run of the prefix changed it: Prepare's merge.
			base := ReadBase(filepath.Join(dir, filepath.FromSlash(rel)))
			c := BaseFile{Data: cur.data}
			switch {
			case c.Equal(base), mine.Equal(c):
				p.files[rel] = prefixFile{mine.Data, en.Mode.Perm()}
				continue
			case base.Other:
				return nil, false
			}
			var merged []byte
			var conflict bool
			if (base.Absent || len(base.Data) == 0) && rel == loopdir.OutputDir+"/progress.txt" {
				merged = append(append([]byte(nil), c.Data...), mine.Data...)
			} else if merged, conflict, err = MergeText(ctx, tmp, base.Data, c.Data, mine.Data); err != nil || conflict {
				return nil, false
			}
			p.files[rel] = prefixFile{merged, en.Mode.Perm()}
		}
	}
	return p, true
}

// Put adds a file no run's layer holds (the plan the engine writes);
// false when a layer holds it.
func (p *Prefix) Put(rel string, data []byte, perm os.FileMode) bool {
	if _, f := p.files[rel]; f {
		return false
	}
	p.files[rel] = prefixFile{data, perm}
	return true
}

// Laid is a prefix's tree as laid: what the folder must hold, once the
// prefix's runs are applied, for the checks run on the tree to stand.
type Laid struct {
	want map[string]laidFile    // each file laid: its sum and its mode
	dirs map[string]os.FileMode // each folder laid, with its mode
}

type laidFile struct {
	sum  string
	perm os.FileMode
}

// Lay writes the tree into up (an upper folder to lay under a check box).
func (p *Prefix) Lay(up string) (*Laid, bool) {
	l := &Laid{want: map[string]laidFile{}, dirs: map[string]os.FileMode{}}
	rels := make([]string, 0, len(p.dirs))
	for rel := range p.dirs {
		rels = append(rels, rel)
	}
	slices.Sort(rels) // parents first
	for _, rel := range rels {
		if err := os.MkdirAll(filepath.Join(up, filepath.FromSlash(rel)), 0o700); err != nil {
			return nil, false
		}
		l.dirs[rel] = p.dirs[rel]
	}
	for rel, f := range p.files {
		to := filepath.Join(up, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, false
		}
		if err := os.WriteFile(to, f.data, f.perm); err != nil || os.Chmod(to, f.perm) != nil {
			return nil, false
		}
		l.want[rel] = laidFile{sum: guard.FileSum(to), perm: f.perm}
	}
	for _, rel := range rels { // the folders' own modes, once filled
		os.Chmod(filepath.Join(up, filepath.FromSlash(rel)), p.dirs[rel])
	}
	return l, true
}

// Covers says whether rel, a path an apply wrote, is one the tree laid
// (a file, a folder, or a folder above a laid file).
func (l *Laid) Covers(rel string) bool {
	_, laid := l.dirs[rel]
	if _, ok := l.want[rel]; ok || laid {
		return true
	}
	for f := range l.want {
		if strings.HasPrefix(f, rel+"/") {
			return true
		}
	}
	return false
}

// Holds says whether dir holds every file the tree laid, byte for byte
// and with its mode, and every folder with its mode.
func (l *Laid) Holds(dir string) bool {
	for rel, f := range l.want {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != f.perm || guard.FileSum(path) != f.sum {
			return false
		}
	}
	for rel, perm := range l.dirs {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != perm {
			return false
		}
	}
	return true
}
