//go:build !windows

package loopdir

import (
	"fmt"
	"os"
	"syscall"
)

// folderIdentity is a folder's device and inode.
func folderIdentity(fi os.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), true
}
