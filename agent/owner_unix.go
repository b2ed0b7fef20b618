//go:build unix

package agent

import (
	"os"
	"syscall"
)

// rootOwned says whether fi's owner is root.
func rootOwned(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0
}
