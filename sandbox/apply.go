//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Applying a layer is all or nothing. ApplyLayer first judges every path
// of the upper folder (keep, and what it stands for) without writing
// anything, writes that plan to a journal in the engine's private folder
// and syncs it, then carries the plan out path by path, appending the
// index of each path done. A kill at any point leaves either no journal
// (nothing reached the target: the layer is dropped) or a journal that
// ResumeApply carries out to the end when the engine starts again: every
// step is safe to do twice, and a step marked done is never done again.

// applyOp is one path of a layer's plan.
type applyOp struct {
	Rel  string      `json:"p"`
	What string      `json:"w"`
	Mode os.FileMode `json:"m"`
	Keep bool        `json:"k,omitempty"`
}

// ApplyLayer applies the upper folder of l to its target, path by path, in
// a deterministic order, and then empties the layer. keep decides about
// each changed path (relative, with slashes); a refused folder is refused
// with everything in it. Nothing is written through a symbolic link: a
// path whose parent in the target is not a real folder is discarded.
// Special files other than overlayfs's whiteouts are discarded. journal,
// when not empty, is the file the plan and its progress are kept in (see
// ResumeApply); it is removed once the layer is applied.
func ApplyLayer(l Layer, keep func(rel string) bool, journal string) ([]LayerChange, error) {
	var ops []applyOp
	var out []LayerChange
	if err := planDir(l.Upper, "", keep, &ops, &out); err != nil {
		return out, err
	}
	var jf *os.File
	if journal != "" && len(ops) > 0 {
		var err error
		if jf, err = writePlan(journal, ops); err != nil {
			return out, fmt.Errorf("cannot write the journal of the layer's apply: %w", err)
		}
		defer jf.Close()
	}
	out, err := carryOut(l, ops, nil, jf, out)
	if err != nil {
		return out, err
	}
	if err := ClearLayer(l); err != nil {
		return out, err
	}
	if journal != "" {
		if err := os.Remove(journal); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, err
		}
	}
	return out, nil
}

// ResumeApply carries out the apply a journal left unfinished (the engine
// died in the middle of it): the paths not yet done are applied, the layer
// is emptied and the journal removed. found is false when there is no
// journal, or when its plan was never wholly written (then nothing of the
// layer reached the target). The changes are every path of the plan.
func ResumeApply(l Layer, journal string) (changes []LayerChange, found bool, err error) {
	data, err := os.ReadFile(journal)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	ops, done, ok := readJournal(data)
	if !ok {
		// The plan itself is torn: no step was carried out before it was
		// whole and synced.
		return nil, false, os.Remove(journal)
	}
	jf, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, true, err
	}
	defer jf.Close()
	changes, err = carryOut(l, ops, done, jf, nil)
	if err != nil {
		return changes, true, err
	}
	if err := ClearLayer(l); err != nil {
		return changes, true, err
	}
	return changes, true, os.Remove(journal)
}

// planDir judges the paths of upper under rel, in order, without writing:
// kept paths become ops, refused ones are listed in out at once.
func planDir(upper, rel string, keep func(string) bool, ops *[]applyOp, out *[]LayerChange) error {
	ents, err := os.ReadDir(filepath.Join(upper, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	for _, en := range ents { // ReadDir sorts by name
		r := joinRel(rel, en.Name())
		src := filepath.Join(upper, filepath.FromSlash(r))
		fi, err := os.Lstat(src)
		if err != nil {
			return err
		}
		what := kindOf(src, fi)
		if !keep(r) {
			refuse(src, r, what, out)
			continue
		}
		*ops = append(*ops, applyOp{Rel: r, What: what, Mode: fi.Mode().Perm(), Keep: true})
		if what == "folder" || what == "replaced folder" {
			if err := planDir(upper, r, keep, ops, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// writePlan writes the plan as the journal's first line and syncs it; the
// file stays open for the marks of the steps done.
func writePlan(journal string, ops []applyOp) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(journal), 0o700); err != nil {
		return nil, err
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(journal, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err = f.Write(append(data, '\n')); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(journal)
		return nil, err
	}
	return f, nil
}

// readJournal reads a journal: the plan, and the steps marked done (a torn
// last mark is ignored). ok is false when the plan line is not whole.
func readJournal(data []byte) (ops []applyOp, done map[int]bool, ok bool) {
	first, rest, whole := bytes.Cut(data, []byte{'\n'})
	if !whole || json.Unmarshal(first, &ops) != nil {
		return nil, nil, false
	}
	done = map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(rest))
	for sc.Scan() {
		if n, err := strconv.Atoi(sc.Text()); err == nil && n >= 0 && n < len(ops) {
			done[n] = true
		}
	}
	return ops, done, true
}

// carryOut applies the plan's steps not in done, marking each in jf (when
// not nil) once it is done, and lists every step in out.
func carryOut(l Layer, ops []applyOp, done map[int]bool, jf *os.File, out []LayerChange) ([]LayerChange, error) {
	// The folders found real on the way to a written file, until a step
	// that makes, removes or replaces something other than a file (only
	// such a step can turn a folder on a later step's way into a link).
	real := map[string]bool{}
	for i, op := range ops {
		if op.What != "written" {
			clear(real)
		}
		if dieBefore != nil && dieBefore(i) {
			return out, errDied
		}
		if done[i] {
			out = append(out, LayerChange{Path: op.Rel, What: op.What, Applied: true})
			continue
		}
		parent := ""
		if i := strings.LastIndexByte(op.Rel, '/'); i >= 0 {
			parent = op.Rel[:i]
		}
		// (real: checked for an earlier file of the same folder)
		if !(parent != "" && real[parent]) && !realParent(l.Target, op.Rel) {
			out = append(out, LayerChange{Path: op.Rel, What: op.What, Why: "a folder on its way is a symbolic link or missing in the loop folder"})
		} else if err := applyOne(l, op); err != nil {
			if errors.Is(err, errSpecial) {
				out = append(out, LayerChange{Path: op.Rel, What: op.What, Why: "a special file"})
			} else {
				return out, fmt.Errorf("apply %s: %w", op.Rel, err)
			}
		} else {
			out = append(out, LayerChange{Path: op.Rel, What: op.What, Applied: true})
			if op.What == "written" && parent != "" {
				real[parent] = true
			}
		}
		if jf != nil {
			if _, err := jf.WriteString(strconv.Itoa(i) + "\n"); err != nil {
				return out, fmt.Errorf("cannot mark the layer's apply: %w", err)
			}
		}
	}
	return out, nil
}

var errSpecial = errors.New("a special file")

// dieBefore, set by tests only, stops an apply before step i as a kill
// would: nothing is cleaned up.
var (
	dieBefore func(i int) bool
	errDied   = errors.New("died in the middle of the apply")
)

// applyOne carries out one step; each is safe to carry out again after a
// kill in its middle (a file already moved out of the upper folder was
// applied).
func applyOne(l Layer, op applyOp) error {
	src := filepath.Join(l.Upper, filepath.FromSlash(op.Rel))
	dst := filepath.Join(l.Target, filepath.FromSlash(op.Rel))
	var err error
	switch op.What {
	case "removed":
		return os.RemoveAll(dst)
	case "folder", "replaced folder":
		if op.What == "replaced folder" {
			err = os.RemoveAll(dst)
		} else if dfi, lerr := os.Lstat(dst); lerr == nil && !dfi.IsDir() {
			err = os.Remove(dst)
		}
		if err == nil {
			err = os.Mkdir(dst, op.Mode)
			if errors.Is(err, os.ErrExist) {
				err = os.Chmod(dst, op.Mode)
			}
		}
		return err
	case "link":
		to, err := os.Readlink(src)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err == nil {
			if err = os.RemoveAll(dst); err == nil {
				err = os.Symlink(to, dst)
			}
		}
		return err
	case "written":
		sfi, serr := os.Lstat(src)
		if errors.Is(serr, os.ErrNotExist) {
			return nil // moved before the kill
		}
		if serr == nil && sfi.Mode().Perm() == op.Mode && os.Rename(src, dst) == nil {
			return nil // the common case in one call: no chmod, no look at dst (a folder there fails it)
		}
		if dfi, lerr := os.Lstat(dst); lerr == nil && dfi.IsDir() {
			err = os.RemoveAll(dst)
		}
		if err == nil {
			err = moveFile(src, dst, op.Mode)
		}
		return err
	}
	return errSpecial
}
