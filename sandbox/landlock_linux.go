package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrictThread applies the Landlock ruleset of s to the calling thread
// (best effort across ABI versions; an error when Landlock is missing).
func restrictThread(s helperSpec) error {
	r := landlockRules{ReadDirs: s.ReadDirs, ReadFiles: s.ReadFiles, Dirs: s.Dirs, Files: s.Files, DeviceDirs: true, Sockets: s.Sockets}
	if s.Net {
		r.TCP, r.ConnectPort = llsyscall.AccessNetConnectTCP, s.NetPort
	}
	return r.restrict()
}

// dropCapabilities leaves the calling thread, and what it executes, no
// capability, as root too: the bounding set is emptied (a root that
// executes a program would otherwise get back every capability in it),
// the ambient set cleared, and the effective, permitted and inheritable
// sets set to none. Landlock already refuses mounts, signals and ptrace
// out of its domain; without this, a root agent could still load a
// kernel module, reboot the machine or set the clock.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop every capability: %w", err)
	}
	return nil
}
