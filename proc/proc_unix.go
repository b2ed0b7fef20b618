//go:build linux || darwin

package proc

import (
	"errors"
	"syscall"
)

// Supported is nil where loops can run.
func Supported() error { return nil }

// SessionAttr starts a command in a session of its own (setsid): no
// controlling terminal, and its process group, which KillGroup ends, is
// the session's.
func SessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// GroupAttr starts a command in a process group of its own (setpgid).
func GroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// KillGroup sends sig to every process of group pgid; sig 0 only says
// whether the group still has a process.
func KillGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return syscall.ESRCH
	}
	return syscall.Kill(-pgid, sig)
}

// Kill sends sig to pid.
func Kill(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return syscall.ESRCH
	}
	return syscall.Kill(pid, sig)
}

// Alive says whether pid is a live process (not a zombie), also one of
// another user.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	e, ok, known := Lookup(pid)
	if !known {
		return true
	}
	return ok && !e.Zombie
}

// Getpgrp is this process's group.
func Getpgrp() int { return syscall.Getpgrp() }
