//go:build unix

package loop

import "syscall"

// oNoFollow refuses to open a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW
