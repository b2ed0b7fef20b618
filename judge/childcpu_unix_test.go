//go:build unix

package judge

import (
	"syscall"
	"time"
)

// childrenCPU is the CPU of this process's children it reaped so far
// (getrusage RUSAGE_CHILDREN): the process tree's figure, which misses a
// process that left the tree (a double-forked daemon, one in a PID
// namespace or a box's server that the engine does not reap per check).
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(ru.Utime) + tv(ru.Stime)
}
