//go:build !linux

package fleet

import "syscall"

// diesWithParent: only Linux kills a child when its parent dies
// (Pdeathsig); elsewhere a step's process can outlive a worker that is
// killed with SIGKILL (a worker that stops cleanly still signals it).
func diesWithParent() *syscall.SysProcAttr { return nil }
