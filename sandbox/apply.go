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
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/looprinter/looprinter/sandbox/nshelper"
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
	// Bits are the special bits (setuid, setgid, sticky) the agent's file
	// or folder had: never applied (see specialBits).
	Bits string `json:"b,omitempty"`
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
		*ops = append(*ops, applyOp{Rel: r, What: what, Mode: fi.Mode().Perm(), Keep: true, Bits: specialBits(fi.Mode())})
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
// not nil) once it is done, and lists every step in out, in the plan's
// order.
//
// The marks are buffered, and reach the journal (a write, never a sync:
// the marks guard against a kill of the engine, as the plan's sync does)
// after every step that is not a file's and at the end. A file's step whose
// mark a kill lost is done again by ResumeApply, and doing it again is
// safe: its file has left the upper folder (the rename is seen done) or
// has not. A folder's, a link's or a removal's mark is written before any
// later step runs, so a replaced folder is never emptied again once the
// files under it were applied.
//
// The files' steps between two other steps are independent of each other
// (each names its own path, under folders no step among them changes): they
// are applied folder by folder, each file with one rename relative to its
// two folders, by a few workers when there are many (the renames wait on
// the file system's journal more than they compute).
func carryOut(l Layer, ops []applyOp, done map[int]bool, jf *os.File, out []LayerChange) ([]LayerChange, error) {
	m := newMarks(jf)
	res := make([]LayerChange, len(ops))
	finish := func(err error) ([]LayerChange, error) {
		for _, c := range res {
			if c.Path != "" {
				out = append(out, c)
			}
		}
		return out, err
	}
	// step carries out a step that is not a file's, alone.
	step := func(i int) error {
		op := ops[i]
		if dieBefore != nil && dieBefore(i) {
			return errDied
		}
		if done[i] {
			res[i] = LayerChange{Path: op.Rel, What: op.What, Applied: true, Stripped: op.Bits}
			return nil
		}
		if !nshelper.RealParent(l.Target, op.Rel) {
			res[i] = LayerChange{Path: op.Rel, What: op.What, Why: whyNotReal}
		} else if err := applyOne(l, op); err != nil {
			if !errors.Is(err, errSpecial) {
				return fmt.Errorf("apply %s: %w", op.Rel, err)
			}
			res[i] = LayerChange{Path: op.Rel, What: op.What, Why: whySpecial}
		} else {
			res[i] = LayerChange{Path: op.Rel, What: op.What, Applied: true, Stripped: op.Bits}
		}
		m.mark(i)
		return nil
	}
	var files []int
	for i := 0; i < len(ops); {
		if w := ops[i].What; w != "written" && w != "folder" {
			if err := step(i); err != nil {
				return finish(err)
			}
			if err := m.flush(); err != nil {
				return finish(err)
			}
			i++
			continue
		}
		// A run of files and folders: the folders first (each is made
		// where it is missing, or put in place of what is not a folder;
		// none is on the way to a file before it, and none makes a link),
		// then the files.
		j := i
		files = files[:0]
		for ; j < len(ops) && (ops[j].What == "written" || ops[j].What == "folder"); j++ {
			if ops[j].What == "written" {
				files = append(files, j)
			} else if err := step(j); err != nil {
				return finish(err)
			}
		}
		if err := m.flush(); err != nil {
			return finish(err)
		}
		if err := applyFiles(l, ops, files, done, res, m); err != nil {
			return finish(err)
		}
		i = j
	}
	return finish(m.flush())
}

const whyNotReal = "a folder on its way is a symbolic link or missing in the loop folder"

// parFiles is the number of files' steps in a row from which they are
// applied by parWorkers workers.
const (
	parFiles   = 256
	parWorkers = 4
)

// applyFiles carries out the files' steps idx (each "written"), folder
// by folder: the folders on the way are checked once per folder (a
// folder that is a link or missing discards its files), then each file is
// one rename between the two folders' descriptors.
func applyFiles(l Layer, ops []applyOp, idx []int, done map[int]bool, res []LayerChange, m *marks) error {
	var groups [][]int // the files of one folder
	for k := 0; k < len(idx); {
		p := parentOf(ops[idx[k]].Rel)
		e := k + 1
		for e < len(idx) && parentOf(ops[idx[e]].Rel) == p {
			e++
		}
		groups = append(groups, idx[k:e])
		k = e
	}
	var stop atomic.Bool // a kill (tests) or an error: no worker starts a step
	do := func(g []int) error {
		parent := parentOf(ops[g[0]].Rel)
		checked, real := false, false
		sfd, dfd := -1, -1
		defer func() { closeFDs(sfd, dfd) }()
		for _, i := range g {
			op := ops[i]
			if stop.Load() {
				return errStopped
			}
			if dieBefore != nil && dieBefore(i) {
				stop.Store(true)
				return errDied
			}
			if !checked && !done[i] {
				checked = true
				if real = parent == "" || nshelper.RealParent(l.Target, op.Rel); real {
					sfd, dfd = openDirs(l, parent)
				}
			}
			switch {
			case done[i]:
				res[i] = LayerChange{Path: op.Rel, What: op.What, Applied: true, Stripped: op.Bits}
				continue
			case !real:
				res[i] = LayerChange{Path: op.Rel, What: op.What, Why: whyNotReal}
			default:
				if err := renameFile(l, op, sfd, dfd); err != nil {
					return fmt.Errorf("apply %s: %w", op.Rel, err)
				}
				res[i] = LayerChange{Path: op.Rel, What: op.What, Applied: true, Stripped: op.Bits}
			}
			m.mark(i)
		}
		return nil
	}
	if len(idx) < parFiles || len(groups) == 1 {
		for _, g := range groups {
			if err := do(g); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	for range min(parWorkers, len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				k := int(next.Add(1)) - 1
				if k >= len(groups) {
					return
				}
				if err := do(groups[k]); err != nil && err != errStopped {
					stop.Store(true)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// errStopped ends a worker of applyFiles when another one failed.
var errStopped = errors.New("stopped")

// renameFile applies one file: a rename from the upper folder's folder sfd
// into the target's folder dfd (both -1: by path). A file already gone
// from the upper folder was applied before a kill; anything else the
// rename refuses (a folder in the file's place, another file system) takes
// the careful path.
func renameFile(l Layer, op applyOp, sfd, dfd int) error {
	if sfd < 0 || dfd < 0 || op.Bits != "" {
		return applyOne(l, op)
	}
	name := op.Rel[strings.LastIndexByte(op.Rel, '/')+1:]
	err := unix.Renameat(sfd, name, dfd, name)
	if err == nil {
		return nil
	}
	var st unix.Stat_t
	if err == unix.ENOENT && unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == unix.ENOENT {
		return nil // moved before the kill
	}
	return applyOne(l, op)
}

// openDirs opens the folder parent of the upper folder and of the target
// (no link followed at the last step; realParent checked the others), or
// returns -1 for both.
func openDirs(l Layer, parent string) (int, int) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	sfd, err := unix.Open(filepath.Join(l.Upper, filepath.FromSlash(parent)), flags, 0)
	if err != nil {
		return -1, -1
	}
	dfd, err := unix.Open(filepath.Join(l.Target, filepath.FromSlash(parent)), flags, 0)
	if err != nil {
		unix.Close(sfd)
		return -1, -1
	}
	return sfd, dfd
}

func closeFDs(fds ...int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// parentOf is the folder of rel ("" at the top).
func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// marks are the journal's marks of the steps done, buffered (see
// carryOut); safe for the workers of applyFiles.
type marks struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
	buf []byte
}

func newMarks(jf *os.File) *marks {
	if jf == nil {
		return &marks{}
	}
	return &marks{w: bufio.NewWriterSize(jf, 64<<10)}
}

func (m *marks) mark(i int) {
	if m.w == nil {
		return
	}
	m.mu.Lock()
	m.buf = strconv.AppendInt(m.buf[:0], int64(i), 10)
	m.buf = append(m.buf, '\n')
	if _, err := m.w.Write(m.buf); err != nil && m.err == nil {
		m.err = err
	}
	m.mu.Unlock()
}

// flush writes the buffered marks to the journal.
func (m *marks) flush() error {
	if m.w == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = m.w.Flush()
	}
	if m.err != nil {
		return fmt.Errorf("cannot mark the layer's apply: %w", m.err)
	}
	return nil
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
		if serr == nil && specialBits(sfi.Mode()) != "" && sfi.Mode().IsRegular() {
			// Off in the upper folder, before the file reaches the target.
			if err := os.Chmod(src, sfi.Mode().Perm()); err != nil {
				return err
			}
			sfi, serr = os.Lstat(src)
		}
		if serr == nil && sfi.Mode().Perm() == op.Mode && os.Rename(src, dst) == nil {
			return nil // no chmod, no look at dst (a folder there fails it)
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
