package wave

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
)

// Merger is what the applies of one wave need: the log of what each
// applied run changed, and the folder's version, as the wave found it, of
// every path a run changed (kept before the first apply that changed it:
// O(change)), the base of each merge.
type Merger struct {
	Log             ApplyLog
	Base            map[string]BaseFile
	Paths, Replaced []string // the run being applied: its paths, and the folders it replaced or removed
}

// NewMerger is the merger of a wave none of whose runs was applied yet.
func NewMerger() *Merger { return &Merger{Base: map[string]BaseFile{}} }

// BaseFile is a path's version: absent, a regular file's bytes, or
// something no merge takes (a folder, a link, a file too large).
type BaseFile struct {
	Absent, Other bool
	Data          []byte
}

func (b BaseFile) Equal(o BaseFile) bool {
	return b.Absent == o.Absent && b.Other == o.Other && !b.Other && bytes.Equal(b.Data, o.Data)
}

// ReadBase reads p's version.
func ReadBase(p string) BaseFile {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return BaseFile{Absent: true}
	case err != nil, !fi.Mode().IsRegular(), fi.Size() > MaxMergeBytes:
		return BaseFile{Other: true}
	}
	data, err := guard.ReadBounded(p, MaxMergeBytes)
	if err != nil {
		return BaseFile{Other: true}
	}
	return BaseFile{Data: data}
}

// upperVersion is what a run's layer holds at rel: a whiteout is absent.
func upperVersion(upper, rel string) BaseFile {
	p := filepath.Join(upper, filepath.FromSlash(rel))
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return BaseFile{Absent: true}
	}
	return ReadBase(p)
}

// Prepare readies a run's layer for its apply: the paths of its that a
// run applied before it in the wave changed too are merged in its layer
// (the merged text replaces what it wrote); the others keep their base. It
// returns why the run conflicts ("" when it does not).
func (w *Merger) Prepare(ctx context.Context, dir, priv string, l sandbox.Layer) (string, error) {
	w.Paths, w.Replaced = nil, nil
	err := filepath.WalkDir(l.Upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == l.Upper {
			return err
		}
		rel, _ := filepath.Rel(l.Upper, p)
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			if sandbox.Opaque(p) {
				w.Replaced = append(w.Replaced, rel)
				w.Paths = append(w.Paths, rel)
			}
		case fi.Mode()&os.ModeCharDevice != 0:
			w.Replaced = append(w.Replaced, rel)
			w.Paths = append(w.Paths, rel)
		default:
			w.Paths = append(w.Paths, rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	touched := map[string]bool{}
	for _, p := range w.Log.TouchedSince(0, w.Paths) {
		touched[p] = true
	}
	tmp := filepath.Join(priv, "merge")
	os.MkdirAll(tmp, 0o700)
	for _, rel := range w.Paths {
		cur := ReadBase(filepath.Join(dir, filepath.FromSlash(rel)))
		base, kept := w.Base[rel]
		if !touched[rel] {
			if !kept {
				w.Base[rel] = cur // no run of the wave changed it yet
			}
			continue
		}
		switch {
		case kept && cur.Equal(base):
			continue // changed by an earlier run's layer, not applied
		case !kept:
			return fmt.Sprintf("%s is inside a folder a run applied before it replaced or removed", rel), nil
		}
		mine := upperVersion(l.Upper, rel)
		switch {
		case mine.Equal(cur):
			continue
		case mine.Other || cur.Other || base.Other:
			return fmt.Sprintf("%s was changed by a run applied before it, and one side is not a file that merges", rel), nil
		case mine.Absent || cur.Absent:
			return fmt.Sprintf("%s was removed on one side and changed on the other", rel), nil
		}
		var merged []byte
		var conflict bool
		if (base.Absent || len(base.Data) == 0) && rel == loopdir.OutputDir+"/progress.txt" {
			// Both runs began the progress file (missing or empty when the
			// wave started): each one's findings, in plan order.
			merged = append(append([]byte(nil), cur.Data...), mine.Data...)
		} else if merged, conflict, err = MergeText(ctx, tmp, base.Data, cur.Data, mine.Data); err != nil {
			return "", err
		}
		if conflict {
			return fmt.Sprintf("its change to %s conflicts with the change a run applied before it made to the same lines", rel), nil
		}
		up := filepath.Join(l.Upper, filepath.FromSlash(rel))
		mode := os.FileMode(0o644)
		if fi, err := os.Lstat(up); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := guard.WriteFile(up, merged, mode, false); err != nil {
			return "", err
		}
	}
	return "", nil
}

// LayerFileSum is the sum of rel as a layer shows it over its folder: the
// layer's file where it wrote one, none where it removed it (or replaced
// a folder above it without it), else the folder's.
func LayerFileSum(l sandbox.Layer, rel string) string {
	up := filepath.Join(l.Upper, filepath.FromSlash(rel))
	if fi, err := os.Lstat(up); err == nil {
		if fi.Mode()&os.ModeCharDevice != 0 {
			return "" // a whiteout: no file (FileSum of an absent one)
		}
		return guard.FileSum(up)
	}
	for d := filepath.Dir(up); len(d) > len(l.Upper); d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil && (fi.Mode()&os.ModeCharDevice != 0 || fi.IsDir() && sandbox.Opaque(d)) {
			return ""
		}
	}
	return guard.FileSum(filepath.Join(l.Target, filepath.FromSlash(rel)))
}
