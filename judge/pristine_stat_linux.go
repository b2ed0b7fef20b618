package judge

import (
	"os"
	"syscall"
)

// changeTime is a file's change time (ns) and inode: what no program can
// set back after it wrote the file.
func changeTime(fi os.FileInfo) (int64, uint64) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return s.Ctim.Sec*1e9 + s.Ctim.Nsec, s.Ino
	}
	return 0, 0
}
