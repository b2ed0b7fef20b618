//go:build !windows

package sandbox

import (
	"os/exec"
	"syscall"
	"time"
)

// TreeUsage is the CPU of cmd's process tree once it has been waited for:
// user and system time of the process and of every process it waited for
// (the rusage wait4 gave), UsageTree. Zero before the wait.
func TreeUsage(cmd *exec.Cmd) Usage {
	if cmd == nil || cmd.ProcessState == nil {
		return Usage{}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return Usage{}
	}
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return Usage{CPU: tv(ru.Utime) + tv(ru.Stime), From: UsageTree}
}
