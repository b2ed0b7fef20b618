package fleet

import "syscall"

// diesWithParent: the step's process is killed when its worker dies.
func diesWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
