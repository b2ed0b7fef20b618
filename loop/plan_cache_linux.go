package loop

import (
	"syscall"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
)

// readPlan is ReadPlan for the engine's own plan.json, parsed again only
// when the file changed (its inode, size, mtime or ctime; ctime cannot be
// set back). A copy is returned: callers may change it.
func (e *Engine) readPlan() (*Plan, []string, error) {
	path := loopdir.Dir(e.dir).Plan()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		if c := e.planCache; c != nil && c.ino == st.Ino && c.size == uint64(st.Size) && c.mtime == st.Mtim.Nano() && c.ctim == st.Ctim.Nano() {
			return clonePlan(c.plan), c.errs, nil
		}
		now := guard.FSClock()
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
