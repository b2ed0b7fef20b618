package proc

import (
	"os"

	"golang.org/x/sys/windows"
)

// ErrWouldBlock is TryLock's error when another open file holds the lock.
var ErrWouldBlock error = windows.ERROR_LOCK_VIOLATION

func lockFile(f *os.File, flags uint32) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

// TryLock takes an exclusive lock on f's first byte without waiting.
func TryLock(f *os.File) error {
	return lockFile(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
}

// Lock takes an exclusive lock on f's first byte, waiting for it.
func Lock(f *os.File) error { return lockFile(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// Unlock releases f's lock.
func Unlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
