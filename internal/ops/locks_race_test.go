//go:build !windows

package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// While other locks come and go (other loops stopping at the same time), the
// process that holds a loop's lock the whole time must always be known as
// its holder: `stop` refuses to signal a run it cannot confirm. (Read through
// /proc/locks alone, about 2% of reads missed it with 400 churning locks.)
func TestLockHeldBySeesAHeldLockWhileOthersChurn(t *testing.T) {
	dir := t.TempDir()
	held := filepath.Join(dir, "held")
	hf, err := os.Create(held)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	var files []*os.File
	for i := 0; i < 400; i++ {
		f, err := os.Create(filepath.Join(dir, "other"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
		if i == 200 {
			if err := syscall.Flock(int(hf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; !stop.Load(); i = (i + 2) % len(files) {
				fd := int(files[i].Fd())
				syscall.Flock(fd, syscall.LOCK_UN)
				syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
			}
		}(w)
	}
	me := os.Getpid()
	missed := 0
	for i := 0; i < 500; i++ {
		h, known := lockHeldBy(me, held)
		if !known {
			t.Fatal("this process's open files could not be read")
		}
		if !h {
			missed++
		}
	}
	stop.Store(true)
	wg.Wait()
	if missed > 0 {
		t.Fatalf("the held lock was missed in %d of 500 reads", missed)
	}
}

// A process that has the lock file open without holding its lock (an agent
// that opened it, or a `status` testing it) is not its holder, nor is one
// that holds a lock on another file.
func TestLockHeldByRefusesOpenersAndOtherLocks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lock")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if h, known := lockHeldBy(os.Getpid(), file); !known || h {
		t.Fatalf("open without its lock: held=%v known=%v, want false true", h, known)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if h, known := lockHeldBy(os.Getpid(), file); !known || !h {
		t.Fatalf("holding its lock: held=%v known=%v, want true true", h, known)
	}
	// Another process (which holds nothing) is not the holder.
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if h, _ := lockHeldBy(cmd.Process.Pid, file); h {
		t.Fatal("a process that holds no lock was taken for the holder")
	}
}
