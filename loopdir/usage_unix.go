//go:build unix

package loopdir

import (
	"io/fs"
	"syscall"
)

// diskUse is what a file takes on disk: its allocated blocks (a sparse
// file takes less than its size).
func diskUse(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
