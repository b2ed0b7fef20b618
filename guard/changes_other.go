//go:build !linux

package guard

import (
	"io/fs"
	"os"
	"sort"
	"time"
)

// fsClockSlack moves the start of a run back: file times come from a
// clock the engine cannot read here, which may lag its own; a file changed
// just after the run began must not look older than the run. Too early
// only makes more files look changed (they are compared then).
const fsClockSlack = int64(time.Second)

// FSClock is when a run starts, against file ctimes (see fsClockSlack).
func FSClock() int64 { return time.Now().UnixNano() - fsClockSlack }

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

func statEntry(rel string, fi os.FileInfo) snapEntry {
	e := snapEntry{Path: rel, Mode: uint32(fi.Mode().Perm()), Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if ino, nlink, ctime, ok := fileIDs(fi); ok {
		e.Ino, e.Nlink, e.CtimeNS = ino, nlink, ctime
	}
	return e
}
