package agent

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// keepOnlyStdio marks every descriptor above 2 close-on-exec, so an agent
// gets standard input, output and error and nothing else: not a descriptor
// the caller of looprinter left open (a file outside the loop folder, a
// terminal, a socket). Go opens its own descriptors close-on-exec already;
// inherited ones are not.
func keepOnlyStdio() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
