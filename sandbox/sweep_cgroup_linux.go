//go:build linux

package sandbox

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SweepCgroups is Sweep for runs that each had a cgroup of their own
// (groups): every process such a run started was born in its cgroup and
// cannot leave it (no sandbox kind but off gives write access to the
// cgroup tree), so what the runs left behind is the kernel's list of their
// cgroups, not a walk of /proc. Each group that still has a process
// (cgroup.events) is killed whole (cgroup.kill; before Linux 5.14 frozen,
// then killed one by one) and waited for until none is left; then the
// zombies re-parented to this process (a child subreaper) are reaped, but
// those in keep or held by Spare. A group with no process costs one read.
// It returns the pids it killed, nil when there was nothing to do.
//
// With the sandbox off an agent runs as the engine's user and may move a
// process out of its cgroup: call Sweep there, and wherever a run had no
// cgroup.
func SweepCgroups(groups []*Cgroup, keep ...int) []int {
	keep = withSpared(keep)
	reap := func() { reapExited(keep) }
	var killed []int
	for _, g := range groups {
		if g == nil {
			continue
		}
		pids, _ := drainCgroup(g.Path, time.Now().Add(cgroupDrain), reap)
		killed = append(killed, pids...)
	}
	reap()
	return killed
}

// reapExited reaps this process's children that have exited, but those in
// keep (their starters wait for them). With nothing kept, wait4(-1) until
// none is left: no read of /proc; otherwise, once waitid says a child has
// exited, the children files name them.
func reapExited(keep []int) {
	if len(keep) == 0 {
		for range sweepPasses * 10 {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				return // none exited (0) or no child at all (ECHILD)
			}
		}
		return
	}
	// Most often no child has exited: one look says so (WNOWAIT leaves a
	// child it finds to be reaped below), with no read of /proc.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo == 0 {
		return
	}
	kids, _ := children()
	for _, pid := range kids {
		if isKept(keep, pid) {
			continue
		}
		if p, ok := readProc(pid); ok && p.zombie {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

func isKept(keep []int, pid int) bool {
	for _, k := range keep {
		if k == pid {
			return true
		}
	}
	return false
}
