//go:build unix

package guard

import "syscall"

// ONoFollow refuses to open a symbolic link.
const ONoFollow = syscall.O_NOFOLLOW
