//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startRunIn runs script with /bin/sh born in the cgroup g, as the engine
// starts an agent run, with SBX_TOKEN=token in its environment, and waits
// for it: what it started in the background outlives it.
func startRunIn(t *testing.T, g *Cgroup, token, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "SBX_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

// The sweep of a run that had a cgroup of its own reads the cgroup's list:
// a daemon the run left (a double fork into a session of its own, its
// parent gone) is killed, nothing of it is left alive, its zombie is
// reaped, and the cgroup is empty. A sweep that did nothing would leave
// the daemon beating.
func TestSweepCgroupsKillsADaemonTheRunLeft(t *testing.T) {
	if err := CgroupProbe(); err != nil {
		t.Skipf("no cgroup v2 this process may make children in (needs root or a delegated cgroup), so runs get no cgroup and Sweep walks the process tree: %v", err)
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	Sweep() // whatever earlier tests left
	g, err := NewCgroup("sweeptest-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.End() })
	token := "cgsweep-" + strconv.Itoa(os.Getpid())
	// Two daemons: one that double-forked into its own session, one that
	// keeps forking (caught as it forks: the cgroup is killed whole).
	startRunIn(t, g, token, "(setsid sh -c 'sleep 60 & exec sleep 60' >/dev/null 2>&1 &) ; (setsid sh -c 'while :; do sleep 60 & sleep 0.01; done' >/dev/null 2>&1 &)")
	before := waitProcs(t, token, 4)
	if len(before) < 4 {
		t.Fatalf("the daemons did not start: %v", before)
	}
	in := cgroupPids(g.Path)
	for _, pid := range before {
		if !slices.Contains(in, pid) {
			t.Fatalf("daemon %d is not in the run's cgroup %v", pid, in)
		}
	}
	killed := SweepCgroups([]*Cgroup{g})
	for _, pid := range before {
		if !slices.Contains(killed, pid) {
			t.Errorf("SweepCgroups killed %v, not the daemon %d", killed, pid)
		}
	}
	// SweepCgroups returns once the cgroup has no process left: nothing of
	// the run lives, now, without a wait.
	if left := tokenProcs(token); len(left) > 0 {
		t.Errorf("alive after SweepCgroups: %v", left)
	}
	if cgroupPopulated(g.Path) {
		t.Errorf("the run's cgroup still has processes: %v", cgroupPids(g.Path))
	}
	if z := zombieChildren(); len(z) > 0 {
		t.Errorf("zombies left after SweepCgroups: %v", z)
	}
	if got := SweepCgroups([]*Cgroup{g}); got != nil {
		t.Errorf("a second SweepCgroups = %v, want nil", got)
	}
	if pids, err := g.End(); err != nil || len(pids) > 0 {
		t.Errorf("End after the sweep = %v, %v: want nothing left to stop", pids, err)
	}
}

// A child the caller keeps, or that Spare holds, is neither killed nor
// reaped by SweepCgroups: it is not in a run's cgroup, and its exit is its
// starter's to wait for.
func TestSweepCgroupsReapsButTheKept(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	Sweep()
	kept := exec.Command("/bin/true")
	if err := kept.Start(); err != nil {
		t.Fatal(err)
	}
	release := Spare(kept.Process.Pid)
	defer release()
	other := exec.Command("/bin/true")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	// Both exit; neither is waited for yet.
	for _, pid := range []int{kept.Process.Pid, other.Process.Pid} {
		for {
			if p, ok := readProc(pid); !ok || p.zombie {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	SweepCgroups(nil)
	if p, ok := readProc(other.Process.Pid); ok && p.zombie {
		t.Errorf("the zombie child %d that is not kept was not reaped", other.Process.Pid)
	}
	if err := kept.Wait(); err != nil {
		t.Errorf("the kept child's Wait = %v, want its own exit", err)
	}
	other.Wait()
}
