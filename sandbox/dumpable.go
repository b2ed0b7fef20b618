//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// Undumpable makes the calling process not dumpable: its
// /proc/PID/environ, mem and fd are then readable by no other process of
// the same user, so an agent (or another loop's agent) cannot read an
// engine's environment and the API keys in it. Every exec resets it: the
// agents the engine starts are dumpable again, which the engine's reaper
// relies on. A process with CAP_SYS_PTRACE (root outside a sandbox) can
// still read it: under bubblewrap an agent has no capability and sees only
// its own PID namespace.
func Undumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
