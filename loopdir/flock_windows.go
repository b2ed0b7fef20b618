package loopdir

import (
	"os"

	"golang.org/x/sys/windows"
)

// errWouldBlock is tryLock's error when another open file holds the lock.
var errWouldBlock error = windows.ERROR_LOCK_VIOLATION

// tryLock takes an exclusive lock on f's first byte without waiting.
func tryLock(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

// unlock releases f's lock.
func unlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
