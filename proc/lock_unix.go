//go:build unix

package proc

import (
	"os"
	"syscall"
)

// ErrWouldBlock is TryLock's error when another open file holds the lock.
var ErrWouldBlock error = syscall.EWOULDBLOCK

// TryLock takes an exclusive lock (flock) on f without waiting.
func TryLock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// Lock takes an exclusive lock (flock) on f, waiting for it.
func Lock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// Unlock releases f's lock.
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
