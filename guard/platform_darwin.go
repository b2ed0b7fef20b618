package guard

import (
	"os"
	"syscall"
)

// fileIDs are a file's inode, link count and ctime (ns).
func fileIDs(fi os.FileInfo) (ino, nlink uint64, ctimeNS int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return st.Ino, uint64(st.Nlink), st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec, true
}

// syncFS writes everything of the file systems to disk (macOS has no
// syncfs: sync, which schedules the writes).
func syncFS(string) error {
	syscall.Sync()
	return nil
}
