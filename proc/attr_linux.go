package proc

import "syscall"

// IntoCgroup makes the command that attr starts be born in the cgroup
// whose directory is open as fd (clone3's CLONE_INTO_CGROUP): it and all
// it starts are in that cgroup before its first instruction. fd <= 0
// leaves attr as it is.
func IntoCgroup(attr *syscall.SysProcAttr, fd int) {
	if attr == nil || fd <= 0 {
		return
	}
	attr.UseCgroupFD = true
	attr.CgroupFD = fd
}

// DieWithParent makes the command that attr starts get SIGKILL when the
// process that started it dies (PR_SET_PDEATHSIG): an agent run does not
// outlive an engine that was killed. (The signal follows the thread that
// started the command; Go ends a thread only when a goroutine locked to
// it returns, and no such goroutine starts commands.)
func DieWithParent(attr *syscall.SysProcAttr) {
	if attr != nil {
		attr.Pdeathsig = syscall.SIGKILL
	}
}
