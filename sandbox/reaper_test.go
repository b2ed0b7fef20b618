//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zombieChildren lists this process's children that are zombies.
func zombieChildren() []int {
	var out []int
	for pid, p := range readProcs() {
		if p.ppid == os.Getpid() && p.zombie {
			out = append(out, pid)
		}
	}
	return out
}

func escapees(t *testing.T, token, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "SBX_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

// waitProcs waits until at least n live processes carry the token (the
// escapees start in the background: on a loaded machine they come late)
// and returns them. The deadline only guards against a hang.
func waitProcs(t *testing.T, token string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if ps := tokenProcs(token); len(ps) >= n || time.Now().After(deadline) {
			return ps
		}
	}
}

// waitGone waits until no live process carries the token and returns what
// is left: a process a sweep missed lives on (the escapees sleep 30s or
// fork forever), so what is left after the guard's minute is a survivor,
// while a killed process is gone once the kernel has reaped it, however
// long that takes on a loaded machine.
func waitGone(token string) []int {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ps := tokenProcs(token); len(ps) == 0 || time.Now().After(deadline) {
			return ps
		}
	}
}

func TestSweep(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	Sweep() // whatever earlier tests left
	if got := Sweep(); got != nil {
		t.Fatalf("Sweep with nothing to do = %v, want nil", got)
	}
	token := "sweep-" + strconv.Itoa(os.Getpid())
	escapees(t, token, "setsid sh -c 'sleep 30' & ( ( sleep 30 ) & ) ; nohup sh -c 'trap \"\" HUP TERM; sleep 30' >/dev/null 2>&1 & (setsid sh -c '( sleep 30 & ) ; sleep 30' &)")
	before := waitProcs(t, token, 4)
	if len(before) < 4 {
		t.Fatalf("the escapees did not start: %v", before)
	}
	killed := Sweep()
	if len(killed) < len(before) {
		t.Errorf("Sweep killed %v, but %v were alive", killed, before)
	}
	if left := tokenProcs(token); len(left) > 0 {
		t.Errorf("alive after Sweep: %v", left)
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombies left after Sweep: %v", z)
	}
	if got := Sweep(); got != nil {
		t.Errorf("a second Sweep = %v, want nil", got)
	}
}

// A process that keeps forking while it is swept is caught anyway.
func TestSweepForker(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	Sweep()
	token := "forker-" + strconv.Itoa(os.Getpid())
	escapees(t, token, "setsid sh -c 'while :; do sleep 30 & done' >/dev/null 2>&1 &")
	if ps := waitProcs(t, token, 3); len(ps) < 3 {
		t.Fatalf("the forker did not start: %v", ps)
	}
	Sweep()
	if left := waitGone(token); len(left) > 0 {
		t.Errorf("alive after Sweep: %d processes", len(left))
		Sweep()
	}
}

// Kept processes and their children survive, and their exec.Cmd still
// waits for them.
func TestSweepKeep(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	Sweep()
	token := "keep-" + strconv.Itoa(os.Getpid())
	kept := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	kept.Env = append(os.Environ(), "SBX_KEPT="+token)
	if err := kept.Start(); err != nil {
		t.Fatal(err)
	}
	defer kept.Process.Kill()
	escapees(t, token, "setsid sleep 30 &") // one process: the PID setsid runs as becomes sleep
	escaped := waitProcs(t, token, 1)
	killed := Sweep(kept.Process.Pid)
	if len(killed) != len(escaped) || len(killed) == 0 {
		t.Errorf("Sweep(keep) killed %v, want the escapees %v", killed, escaped)
	}
	if len(tokenProcs(token)) != 0 {
		t.Errorf("the escapee survived")
	}
	alive := 0
	for pid, p := range readProcs() {
		if (pid == kept.Process.Pid || p.ppid == kept.Process.Pid) && !p.zombie {
			alive++
		}
	}
	if alive != 2 {
		t.Errorf("the kept process and its child: %d alive, want 2", alive)
	}
	kept.Process.Kill()
	err := kept.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the kept command's Wait = %v, want its own exit (signal: killed)", err)
	}
	Sweep() // its sleep, re-parented to us
}

// A child Spare holds is neither killed nor reaped by Sweep (the engine's
// own git update of the index, running beside an agent run, would leave
// index.lock behind); once released, it is swept like any other.
func TestSweepSparesWhatSpareHolds(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	release := Spare(cmd.Process.Pid)
	for _, pid := range Sweep() {
		if pid == cmd.Process.Pid {
			t.Fatal("Sweep killed a spared child")
		}
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("the spared child is gone: %v", err)
	}
	release()
	release() // twice is once
	killed := Sweep()
	found := false
	for _, pid := range killed {
		found = found || pid == cmd.Process.Pid
	}
	if !found {
		t.Errorf("Sweep after release killed %v, not the child %d", killed, cmd.Process.Pid)
	}
}
