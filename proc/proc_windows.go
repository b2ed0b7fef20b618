package proc

import "syscall"

// Supported says that loops do not run on Windows.
func Supported() error { return ErrUnsupported }

// SessionAttr is nil on Windows: nothing starts a run's process there.
func SessionAttr() *syscall.SysProcAttr { return nil }

// GroupAttr is nil on Windows.
func GroupAttr() *syscall.SysProcAttr { return nil }

// KillGroup fails on Windows.
func KillGroup(pgid int, sig syscall.Signal) error { return ErrUnsupported }

// Kill fails on Windows.
func Kill(pid int, sig syscall.Signal) error { return ErrUnsupported }

// Alive is false on Windows: no run's pid is ever recorded there.
func Alive(pid int) bool { return false }

// Table fails on Windows.
func Table() ([]Entry, error) { return nil, ErrUnsupported }

// Lookup knows nothing on Windows.
func Lookup(pid int) (e Entry, ok, known bool) { return Entry{}, false, false }

// Environ fails on Windows.
func Environ(pid int) ([]byte, error) { return nil, ErrUnsupported }

// Args fails on Windows.
func Args(pid int) ([]string, error) { return nil, ErrUnsupported }

// OwnerEnv is nil on Windows.
func OwnerEnv() []string { return nil }

// Getpgrp is 0 on Windows: no process groups.
func Getpgrp() int { return 0 }
