package sandbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockRules is what one Landlock box holds, an agent run's or a
// check's: the one builder of both rulesets.
type landlockRules struct {
	ReadDirs, ReadFiles []string // read-only
	Dirs, Files         []string // writable
	// DeviceDirs: /dev/pts and /dev/shm writable too (agent runs; a
	// check gets the harmless device files only).
	DeviceDirs bool
	// TCP are the TCP rights handled (0: the network is open); ConnectPort
	// is the one port a connect may reach (0: none).
	TCP         landlock.AccessNetSet
	ConnectPort int
	// Sockets are the host's unix sockets the loop lets in
	// (sandbox.allow_sockets).
	Sockets []string
}

// unixFilter says whether a box on a kernel with Landlock ABI abi needs
// the seccomp filter that refuses unix sockets: Landlock cannot refuse
// connecting to them by path before resolveUnixABI; with sockets let in
// by the loop, which it then cannot tell from the others, they stay open.
func unixFilter(abi int, sockets []string) bool {
	return abi < resolveUnixABI && len(sockets) == 0
}

// restrict applies r to the calling thread, which then executes the run's
// program: Landlock (best effort across ABI versions; an error when
// Landlock is missing), signals and abstract unix sockets scoped to the
// domain (ABI 6), unix sockets by path kept to the box's own folders and
// r.Sockets (ABI 9; before it no unix socket at all unless the loop lets
// some in), and no capability.
func (r landlockRules) restrict() error {
	all := fsRights | landlock.AccessFSSet(llsyscall.AccessFSResolveUnix)
	cfg := landlock.Config{HandledAccessFS: all, HandledAccessNet: r.TCP, Scoped: llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket}
	cfg = cfg.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs(r.ReadDirs...).IgnoreIfMissing(),
		landlock.ROFiles(r.ReadFiles...).IgnoreIfMissing(),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
	}
	if r.DeviceDirs {
		rules = append(rules, landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing())
	}
	if len(r.Dirs) > 0 {
		rules = append(rules, landlock.RWDirs(r.Dirs...).WithRefer().WithResolveUnix().IgnoreIfMissing())
	}
	if len(r.Files) > 0 {
		rules = append(rules, landlock.RWFiles(r.Files...).IgnoreIfMissing())
	}
	if len(r.Sockets) > 0 {
		rules = append(rules, landlock.ROFiles(r.Sockets...).WithResolveUnix().IgnoreIfMissing())
	}
	if r.TCP != 0 && r.ConnectPort > 0 && r.ConnectPort < 65536 {
		rules = append(rules, landlock.ConnectTCP(uint16(r.ConnectPort)))
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
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	if unixFilter(abi, r.Sockets) {
		if err := refuseUnixSockets(); err != nil {
			return err
		}
	}
	return dropCapabilities()
}
