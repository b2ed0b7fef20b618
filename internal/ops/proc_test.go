//go:build !windows

package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

func waitPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard against a hang only
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", file)
	return 0
}

// killRun kills the engine, what it started and what its agents left
// behind, but not the wrapper that started the engine, nor another process
// of the wrapper's process group, nor another loop's processes.
func TestKillRunSparesWrapper(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	f := func(name string) string { return filepath.Join(dir, name) }
	// The wrapper (a CI job in its own process group) runs a sibling (think
	// `| tee`) and the "engine", which starts an agent that escapes with
	// setsid, and a plain child.
	wrapper := exec.Command("/bin/sh", "-c", `
env -u LOOPRINTER_DIR sleep 60 & echo $! > sibling.pid
sh -c 'echo $$ > engine.pid; setsid sh -c "echo \$\$ > agent.pid; sleep 60" & sleep 60 & wait'
echo $? > rc`)
	wrapper.Dir = dir
	wrapper.Env = append(os.Environ(), "LOOPRINTER_DIR="+dir)
	wrapper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-wrapper.Process.Pid, syscall.SIGKILL)
	engine := waitPID(t, f("engine.pid"))
	sibling := waitPID(t, f("sibling.pid"))
	agent := waitPID(t, f("agent.pid"))
	defer syscall.Kill(sibling, syscall.SIGKILL)
	// A process the run's agent left behind, re-parented away from the
	// engine, and one of another loop.
	orphan := exec.Command("/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	orphan.Env = append(os.Environ(), "LOOPRINTER_DIR="+dir)
	out, err := orphan.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphanPID, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	stranger := exec.Command("sleep", "60")
	stranger.Env = append(os.Environ(), "LOOPRINTER_DIR="+other)
	stranger.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	defer stranger.Process.Kill()
	defer syscall.Kill(orphanPID, syscall.SIGKILL)

	killed := killRun(engine, dir)
	t.Logf("killed %v", killed)
	for name, pid := range map[string]int{"engine": engine, "escaped agent": agent, "orphan": orphanPID} {
		// Killed is gone once the kernel has reaped it, however long that
		// takes on a loaded machine; one missed lives on past the guard.
		gone := false
		for deadline := time.Now().Add(30 * time.Second); !gone && time.Now().Before(deadline); {
			if gone = !Alive(pid); !gone {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if !gone {
			t.Errorf("the %s (pid %d) is alive", name, pid)
		}
	}
	for name, pid := range map[string]int{"sibling in the wrapper's group": sibling, "other loop's process": stranger.Process.Pid} {
		if !Alive(pid) {
			t.Errorf("the %s (pid %d) was killed", name, pid)
		}
	}
	done := make(chan error, 1)
	go func() { done <- wrapper.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the wrapper: %v", err)
		}
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("the wrapper did not finish")
	}
	if b, _ := os.ReadFile(f("rc")); strings.TrimSpace(string(b)) != "137" {
		t.Errorf("the wrapper wrote rc %q, want 137 (its engine was SIGKILLed)", b)
	}
}

// Only the process that holds the lock counts as the engine: a pid written
// into the lock file by someone else does not.
func TestIsEngine(t *testing.T) {
	dir := t.TempDir()
	lock, err := loopdir.AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if !isEngine(os.Getpid(), dir) {
		t.Errorf("the lock holder is not taken for the engine")
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	if isEngine(other.Process.Pid, dir) {
		t.Errorf("a process that does not hold the lock is taken for the engine")
	}
	if isEngine(0, dir) || isEngine(1<<30, dir) {
		t.Errorf("a pid that does not exist is taken for the engine")
	}
}
