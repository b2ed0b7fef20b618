package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrictThread applies the Landlock ruleset of s to the calling thread
// (best effort across ABI versions; an error when Landlock is missing).
func restrictThread(s helperSpec) error {
	// Signals and abstract unix sockets stay inside the run's domain
	// (ABI 6): no signal to the engine or the user's processes, no
	// connection to an abstract socket of theirs (a session bus, an X
	// server).
	cfg := landlock.Config{HandledAccessFS: fsRights, Scoped: llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket}
	if s.Net {
		cfg.HandledAccessNet = llsyscall.AccessNetConnectTCP
	}
	cfg = cfg.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs(s.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(s.ReadFiles...).IgnoreIfMissing(),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(s.Dirs) > 0 {
		rules = append(rules, landlock.RWDirs(s.Dirs...).WithRefer().IgnoreIfMissing())
	}
	if len(s.Files) > 0 {
		rules = append(rules, landlock.RWFiles(s.Files...).IgnoreIfMissing())
	}
	if s.Net && s.NetPort > 0 && s.NetPort < 65536 {
		rules = append(rules, landlock.ConnectTCP(uint16(s.NetPort)))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock is not available in this kernel")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return dropCapabilities()
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
