//go:build !linux

package proc

import "syscall"

// IntoCgroup does nothing here: cgroups are Linux's.
func IntoCgroup(attr *syscall.SysProcAttr, fd int) {}

// DieWithParent does nothing here: there is no parent-death signal.
func DieWithParent(attr *syscall.SysProcAttr) {}
