//go:build linux || darwin

package loop

import (
	"os"

	"golang.org/x/sys/unix"
)

func diskFree(path string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil || st.Blocks == 0 {
		return 0, false
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 {
		blocks = st.Bfree // root may write the blocks kept for it
	}
	return blocks * uint64(st.Bsize), true
}
