package loop

import (
	"io/fs"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// fsClock is the clock file timestamps are taken from (the coarse one).
func fsClock() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts) != nil {
		unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	}
	return ts.Nano()
}

// changedSince walks the loop folder for the files whose ctime is at or
// past since.
func changedSince(dir string, since int64) ([]string, error) {
	var out []string
	err := walkFiles(dir, func(rel string, d fs.DirEntry) {
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ctim.Nano() >= since {
				out = append(out, rel)
			}
		}
	})
	sort.Strings(out)
	return out, err
}

// readPlan is ReadPlan for the engine's own plan.json, parsed again only
// when the file changed (its inode, size, mtime or ctime; ctime cannot be
// set back). A copy is returned: callers may change it.
func (e *Engine) readPlan() (*Plan, []string, error) {
	path := e.planPath()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		if c := e.planCache; c != nil && c.ino == st.Ino && c.size == uint64(st.Size) && c.mtime == st.Mtim.Nano() && c.ctim == st.Ctim.Nano() {
			return clonePlan(c.plan), c.errs, nil
		}
		now := fsClock()
		p, errs, err := ReadPlan(path)
		var after syscall.Stat_t
		if err == nil && syscall.Lstat(path, &after) == nil && after.Ino == st.Ino && after.Size == st.Size && after.Mtim == st.Mtim && after.Ctim == st.Ctim && now-st.Ctim.Nano() > racyWindow && now-st.Mtim.Nano() > racyWindow {
			e.planCache = &planCache{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano(), ctim: st.Ctim.Nano(), plan: clonePlan(p), errs: errs}
		} else {
			e.planCache = nil
		}
		return p, errs, err
	}
	e.planCache = nil
	return ReadPlan(path)
}
