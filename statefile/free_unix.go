//go:build linux || darwin

package statefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Free says how many bytes the engine (and the agents it runs, as the same
// user) can still write on the filesystem of path; ok is false when it
// cannot tell.
func Free(path string) (uint64, bool) {
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
