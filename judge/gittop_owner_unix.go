//go:build unix

package judge

import (
	"os"
	"syscall"
)

// fileOwner is the user that owns fi's file (-1 when not known).
func fileOwner(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
