//go:build !linux && !windows

package agent

import "golang.org/x/sys/unix"

// keepOnlyStdio marks every descriptor above 2 close-on-exec (see the
// Linux version); without close_range, the first 1024 one by one.
func keepOnlyStdio() {
	for fd := 3; fd < 1024; fd++ {
		unix.CloseOnExec(fd)
	}
}
