//go:build linux

package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killOrphans kills the processes of an agent process group that a crashed
// engine left behind. Only processes that are both in the group and carry
// this loop's LOOPRINTER_DIR are touched, so a reused group id is safe.
func killOrphans(pgid int, dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	want := []byte("LOOPRINTER_DIR=" + dir + "\x00")
	var killed []int
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(p, "stat")); err == nil {
			if i := strings.LastIndex(string(stat), ")"); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
