package judge

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// The holdout files' store. While the loop's engine runs agents, the
// holdout files git does not hold are not in the loop folder at all: they
// are moved into the engine's private folder (loopdir.Private.HoldoutFiles)
// before the first agent run, and put back when the engine ends (or, after
// a crash, when it starts again). No agent of any loop can read them by
// their path then, whatever its sandbox shows of the folder; the holdout
// checks' view alone has them, laid at their paths (holdoutView). A
// holdout file git holds stays where it is: moving it would be a change
// the engine commits, and the repository is hidden with it anyway. Between
// runs the files are the user's, in the folder, and every agent run of
// another loop masks them (loopdir.OtherSecrets).

var storeMu sync.Mutex

// KeepHoldouts moves the holdout files git does not hold into the store,
// once HoldoutReady has passed. A file already in the store stays there.
func (j *Judge) KeepHoldouts() error {
	storeMu.Lock()
	defer storeMu.Unlock()
	if len(j.holdouts) == 0 || j.holdoutsKept {
		return nil
	}
	store := loopdir.PrivateOf(j.Dir).HoldoutFiles()
	tracked := HoldoutTracked(j.Dir, j.holdouts)
	for _, h := range j.holdouts {
		if slices.Contains(tracked, h) || !nshelper.RealParent(j.Dir, h) {
			continue
		}
		src := filepath.Join(j.Dir, filepath.FromSlash(h))
		dst := filepath.Join(store, filepath.FromSlash(h))
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // kept before
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := os.Rename(src, dst); err != nil {
			// Another file system: a copy, then the folder's file removed.
			if err := sandbox.CopyFile(src, dst, fi.Mode().Perm()); err != nil {
				return err
			}
			if err := os.Remove(src); err != nil {
				return err
			}
		}
	}
	j.holdoutsKept = true
	return nil
}

// RestoreHoldouts puts the holdout files the store holds back in the loop
// folder dir and empties the store. A path the folder holds again (the
// user wrote it) keeps the folder's file.
func RestoreHoldouts(dir string) error {
	storeMu.Lock()
	defer storeMu.Unlock()
	store := loopdir.PrivateOf(dir).HoldoutFiles()
	files, err := storedHoldouts(store)
	if err != nil || len(files) == 0 {
		return err
	}
	for _, rel := range files {
		src := filepath.Join(store, filepath.FromSlash(rel))
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if !nshelper.RealParent(dir, rel) {
			continue // never through a link: the file stays in the store
		}
		if err := os.Rename(src, dst); err != nil {
			fi, serr := os.Lstat(src)
			if serr != nil {
				return err
			}
			if err := sandbox.CopyFile(src, dst, fi.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	for _, rel := range files {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return nil // one stays in the store: keep it
		}
	}
	return os.RemoveAll(store)
}

// storedHoldouts lists the files of the store (relative, with slashes,
// sorted).
func storedHoldouts(store string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == store {
				return filepath.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(store, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// holdoutView is what the holdout checks' view changes for the store: the
// holdout files kept there are laid at their paths (and whatever the
// folder holds there is left out).
func (j *Judge) holdoutView() (hide []string, put []sandbox.ViewFile) {
	store := loopdir.PrivateOf(j.Dir).HoldoutFiles()
	files, _ := storedHoldouts(store)
	for _, rel := range files {
		from := filepath.Join(store, filepath.FromSlash(rel))
		fi, err := os.Stat(from)
		if err != nil {
			continue
		}
		hide = append(hide, rel)
		put = append(put, sandbox.ViewFile{From: from, To: rel, Mode: fi.Mode().Perm()})
	}
	return hide, put
}

// holdoutSource is where the file rel of the loop folder is read: in the
// store when it is a holdout file kept there, else in the folder.
func (j *Judge) holdoutSource(rel string) string {
	if slices.Contains(j.holdouts, rel) {
		p := filepath.Join(loopdir.PrivateOf(j.Dir).HoldoutFiles(), filepath.FromSlash(rel))
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return filepath.Join(j.Dir, filepath.FromSlash(rel))
}
