package plan

import (
	"syscall"

	"github.com/looprinter/looprinter/guard"
)

// Read is Read for the plan file at path, parsed again only when the file
// changed (its inode, size, mtime or ctime; ctime cannot be set back) or
// when c last held another path. A copy is returned: callers may change it.
func (c *Cache) Read(path string) (*Plan, []string, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		if c.held && c.path == path && c.ino == st.Ino && c.size == uint64(st.Size) && c.mtime == st.Mtim.Nano() && c.ctim == st.Ctim.Nano() {
			return c.plan.Clone(), c.errs, nil
		}
		now := guard.FSClock()
		p, errs, err := Read(path)
		var after syscall.Stat_t
		if err == nil && syscall.Lstat(path, &after) == nil && after.Ino == st.Ino && after.Size == st.Size && after.Mtim == st.Mtim && after.Ctim == st.Ctim && now-st.Ctim.Nano() > racyWindow && now-st.Mtim.Nano() > racyWindow {
			*c = Cache{held: true, path: path, ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano(), ctim: st.Ctim.Nano(), plan: p.Clone(), errs: errs}
		} else {
			*c = Cache{}
		}
		return p, errs, err
	}
	*c = Cache{}
	return Read(path)
}
