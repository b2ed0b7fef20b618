//go:build !linux

package confine

import (
	"os"
	"syscall"

	"github.com/looprinter/looprinter/proc"
)

// killOrphans kills the processes of an agent process group that a crashed
// engine left behind, read from the process table (see the Linux version):
// only those both in the group and carrying this loop's LOOPRINTER_DIR.
func killOrphans(pgid int, dir string) []int {
	table, err := proc.Table()
	if err != nil {
		return nil
	}
	want := "LOOPRINTER_DIR=" + dir
	var killed []int
	for _, e := range table {
		if e.PGID != pgid || e.PID == os.Getpid() || e.Zombie {
			continue
		}
		env, err := proc.Environ(e.PID)
		if err != nil || !proc.EnvHas(env, want) {
			continue
		}
		if proc.Kill(e.PID, syscall.SIGKILL) == nil {
			killed = append(killed, e.PID)
		}
	}
	return killed
}
