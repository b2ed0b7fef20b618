package sandbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrictThread applies the Landlock ruleset of s to the calling thread
// (best effort across ABI versions; an error when Landlock is missing).
func restrictThread(s helperSpec) error {
	cfg := landlock.Config{HandledAccessFS: fsRights, Scoped: llsyscall.ScopeSignal}.BestEffort()
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(s.Dirs) > 0 {
		rules = append(rules, landlock.RWDirs(s.Dirs...).WithRefer().IgnoreIfMissing())
	}
	if len(s.Files) > 0 {
		rules = append(rules, landlock.RWFiles(s.Files...).IgnoreIfMissing())
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
	return nil
}
