//go:build unix

package loop

import (
	"syscall"
	"time"
)

// cpuTime is this process's user and system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syncDisks writes every file system's dirty data.
func syncDisks() { syscall.Sync() }
