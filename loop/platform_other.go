//go:build !linux

package loop

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// fsClockSlack moves the start of a run back: file times come from a
// clock the engine cannot read here, which may lag its own; a file changed
// just after the run began must not look older than the run. Too early
// only makes more files look changed (they are compared then).
const fsClockSlack = int64(time.Second)

// fsClock is when a run starts, against file ctimes (see fsClockSlack).
func fsClock() int64 { return time.Now().UnixNano() - fsClockSlack }

// changedSince walks the loop folder for the files whose ctime (or, where
// there is none, mtime) is at or past since.
func changedSince(dir string, since int64) ([]string, error) {
	var out []string
	err := walkFiles(dir, func(rel string, d fs.DirEntry) {
		if info, err := d.Info(); err == nil {
			if _, _, ctime, ok := fileIDs(info); ok && ctime >= since || !ok && info.ModTime().UnixNano() >= since {
				out = append(out, rel)
			}
		}
	})
	sort.Strings(out)
	return out, err
}

// readPlan is ReadPlan for the engine's own plan.json, parsed every time
// (the Linux version keeps it while the file's stat does not change).
func (e *Engine) readPlan() (*Plan, []string, error) {
	e.planCache = nil
	return ReadPlan(e.planPath())
}

func statEntry(rel string, fi os.FileInfo) guardEntry {
	e := guardEntry{Path: rel, Mode: uint32(fi.Mode().Perm()), Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if ino, nlink, ctime, ok := fileIDs(fi); ok {
		e.Ino, e.Nlink, e.CtimeNS = ino, nlink, ctime
	}
	return e
}

// fdatasync writes f's data to disk.
func fdatasync(f *os.File) error { return f.Sync() }

// writeCopy replaces path with data for readers: written beside it, then
// renamed over it (the Linux version exchanges it with a spare instead).
func writeCopy(path string, data []byte) error {
	next := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".next")
	os.Remove(next) // whatever is there (a link planted in its place) is never written through
	if err := os.MkdirAll(filepath.Dir(next), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(next, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(next, path)
	}
	if werr != nil {
		os.Remove(next)
	}
	return werr
}
