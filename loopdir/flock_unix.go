//go:build unix

package loopdir

import (
	"os"
	"syscall"
)

// errWouldBlock is tryLock's error when another open file holds the lock.
var errWouldBlock error = syscall.EWOULDBLOCK

// tryLock takes an exclusive flock on f without waiting.
func tryLock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// unlock releases f's flock.
func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
