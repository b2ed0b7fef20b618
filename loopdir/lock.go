package loopdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/looprinter/looprinter/proc"
)

// ErrLocked says another run holds the loop.
type ErrLocked struct{ PID int }

func (e *ErrLocked) Error() string {
	return fmt.Sprintf("another looprinter run (pid %d) holds this loop; stop it with `looprinter stop` or wait for it", e.PID)
}

// Lock is an exclusive hold on a loop directory. It uses flock, so a lock
// left by a dead process is free again at once: the kernel drops it.
type Lock struct{ f *os.File }

// AcquireLock takes the loop's lock or returns *ErrLocked naming the holder.
func AcquireLock(dir string) (*Lock, error) {
	path := Dir(dir).LockFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := tryLockPastProbes(f, dir); err != nil {
		f.Close()
		if errors.Is(err, proc.ErrWouldBlock) {
			return nil, &ErrLocked{PID: LockHolder(dir)}
		}
		return nil, err
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// probeWait bounds how long AcquireLock waits out a holder that wrote no
// pid: Locked's probe (status, list, start waiting for its child) takes the
// lock for a moment without writing one, and a run starting in that moment
// must not be refused as if another run held the loop. A run that holds the
// loop writes its pid as soon as it has the lock, so the wait ends at once
// for it, and a holder that never writes one is refused after the wait.
const probeWait = 2 * time.Second

func tryLockPastProbes(f *os.File, dir string) error {
	deadline := time.Now().Add(probeWait)
	for {
		err := proc.TryLock(f)
		if err == nil || !errors.Is(err, proc.ErrWouldBlock) {
			return err
		}
		if LockHolder(dir) != 0 || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Release frees the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	proc.Unlock(l.f)
	l.f.Close()
	l.f = nil
}

// LockHolder returns the pid written in the lock file, or 0.
func LockHolder(dir string) int {
	data, err := os.ReadFile(Dir(dir).LockFile())
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// Locked reports whether a live run holds the loop, and its pid.
func Locked(dir string) (bool, int) {
	f, err := os.OpenFile(Dir(dir).LockFile(), os.O_RDWR, 0)
	if err != nil {
		return false, 0
	}
	defer f.Close()
	if err := proc.TryLock(f); err != nil {
		return true, LockHolder(dir)
	}
	proc.Unlock(f)
	return false, 0
}
