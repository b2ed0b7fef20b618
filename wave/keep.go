package wave

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/looprinter/looprinter/sandbox"
)

// The kept attempt of a best-of is judged twice: on its own layer, with
// the other attempts (which PickBest ranks), and then on the applied tree,
// before any other passing attempt is dropped. Code that tells the judged
// view from the applied one (its layer mounted under the checks) passes
// the first and fails the second: its apply is taken back (Undo) and the
// next passing attempt is tried. A passing attempt is never dropped before
// the kept one has passed on the applied tree.

// Ranked lists the passing attempts' positions in the order they are
// tried: the best (PickBest's choice) first.
func Ranked(attempts []Attempt) []int {
	var out []int
	for i, a := range attempts {
		if a.Pass {
			out = append(out, i)
		}
	}
	sort.SliceStable(out, func(x, y int) bool { return smaller(attempts[out[x]], attempts[out[y]]) })
	return out
}

// Keep tries the passing attempts in Ranked order: try applies attempt i
// and judges it on the applied tree (true: it passed there and stays; false:
// it failed there, and try took it back out of the folder). It returns the
// kept attempt's position, false when no attempt passed on the applied tree,
// and try's error, which ends the tries.
func Keep(attempts []Attempt, try func(i int) (bool, error)) (int, bool, error) {
	return keepIn(Ranked(attempts), try)
}

// keepIn is Keep over the passing attempts in order.
func keepIn(order []int, try func(i int) (bool, error)) (int, bool, error) {
	for _, i := range order {
		ok, err := try(i)
		if err != nil {
			return i, ok, err
		}
		if ok {
			return i, true, nil
		}
	}
	return -1, false, nil
}

// Keeper chooses the kept attempt of a best-of with what the engine
// gives it: Apply applies attempt i and judges it on the applied tree
// (true: it passed there and stays; false: it was taken back), Drop
// clears attempt i's layer (its work is on its ref). The failing attempts
// are dropped first; the passing ones only once one of them has passed on
// the applied tree, or none could.
type Keeper struct {
	Apply func(i int) (bool, error)
	Drop  func(i int)
	// Chosen is 1 + the position of the attempt a reviewer chose
	// (retry.choose: review), tried first when it passed; 0: none.
	Chosen int
}

// Keep runs the choice over the judged attempts: the kept one's position,
// false when none passed on the applied tree, and Apply's error (every
// attempt but the one it was applying is dropped then too).
func (k Keeper) Keep(attempts []Attempt) (int, bool, error) {
	dropped := make([]bool, len(attempts))
	for i, a := range attempts {
		if !a.Pass {
			k.Drop(i)
			dropped[i] = true
		}
	}
	best, ok, err := keepIn(Order(attempts, k.Chosen), k.Apply)
	ok = ok && err == nil
	for i := range attempts {
		if !dropped[i] && (i != best || !ok && err == nil) {
			k.Drop(i)
		}
	}
	return best, ok, err
}

// Undo is what an apply of a layer replaces in the folder, kept so that
// the apply can be taken back: the folder's version of every path the
// layer changes (absent, a file, a link or a whole folder).
type Undo struct {
	dir, keep string
	paths     []undoPath
}

type undoPath struct {
	rel    string
	absent bool
}

// Backup keeps, in tmp (a folder of the engine's own, made afresh), the
// folder dir's version of every path the layer upper changes, except the
// paths skip names (the engine's own, which an apply never writes).
func Backup(dir, upper, tmp string, skip func(rel string) bool) (*Undo, error) {
	entries, err := sandbox.LayerEntries(upper)
	if err != nil {
		return nil, err
	}
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	u := &Undo{dir: dir, keep: tmp}
	var whole []string // folders kept with everything in them
	covered := func(rel string) bool {
		for _, w := range whole {
			if within(rel, w) {
				return true
			}
		}
		return false
	}
	for _, e := range entries {
		if skip(e.Rel) || covered(e.Rel) {
			continue
		}
		src := filepath.Join(dir, filepath.FromSlash(e.Rel))
		fi, err := os.Lstat(src)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			u.paths = append(u.paths, undoPath{rel: e.Rel, absent: true})
			continue
		case err != nil:
			return nil, err
		case e.What == "folder" && fi.IsDir():
			continue // a folder that stays: what changes under it is listed on its own
		}
		if err := copyPath(src, filepath.Join(tmp, filepath.FromSlash(e.Rel)), fi); err != nil {
			return nil, fmt.Errorf("cannot keep %s to take an apply back: %w", e.Rel, err)
		}
		u.paths = append(u.paths, undoPath{rel: e.Rel})
		if fi.IsDir() {
			whole = append(whole, e.Rel)
		}
	}
	return u, nil
}

// Restore takes the apply back: every path kept is put back as it was, the
// deepest first, and what the apply created is removed.
func (u *Undo) Restore() error {
	var errs []error
	for _, p := range slices.Backward(u.paths) {
		dst := filepath.Join(u.dir, filepath.FromSlash(p.rel))
		if err := os.RemoveAll(dst); err != nil {
			errs = append(errs, err)
			continue
		}
		if p.absent {
			continue
		}
		src := filepath.Join(u.keep, filepath.FromSlash(p.rel))
		fi, err := os.Lstat(src)
		if err == nil {
			err = copyPath(src, dst, fi)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.rel, err))
		}
	}
	return errors.Join(errs...)
}

// Drop removes what Backup kept.
func (u *Undo) Drop() { os.RemoveAll(u.keep) }

func within(rel, dir string) bool {
	return rel == dir || len(rel) > len(dir) && rel[:len(dir)] == dir && rel[len(dir)] == '/'
}

// copyPath copies a file, a link or a folder (with everything in it).
func copyPath(src, dst string, fi os.FileInfo) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := os.MkdirAll(dst, fi.Mode().Perm()); err != nil {
			return err
		}
		return sandbox.CopyTree(src, dst, nil)
	case fi.Mode()&os.ModeSymlink != 0:
		to, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(to, dst)
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, fi.Mode().Perm())
	}
	return nil // a special file: an apply never writes one
}
