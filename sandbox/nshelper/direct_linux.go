//go:build linux

package nshelper

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Direct makes cmd, when it starts the layer helper's stage 1 (its
// environment carries a stage-1 Spec under EnvLayers or EnvCheckLayers),
// start stage 2 at once: the clone that starts the process makes its
// namespaces (a mount namespace, a network namespace when the Spec has
// one, and for a user without privileges a user namespace in which the
// user is root, where this process is dumpable), so the helper's binary
// starts once, not twice. Call it
// once cmd.Env and cmd.SysProcAttr are set, just before cmd.Start; a
// command that is not the helper's is left as it is. Without it, the
// helper makes the namespaces itself (as root on one thread, else by
// starting itself again).
func Direct(cmd *exec.Cmd) error {
	idx, key := -1, ""
	for i := len(cmd.Env) - 1; i >= 0 && idx < 0; i-- {
		for _, k := range []string{EnvLayers, EnvCheckLayers} {
			if strings.HasPrefix(cmd.Env[i], k+"=") {
				idx, key = i, k
				break
			}
		}
	}
	if idx < 0 {
		return nil
	}
	var s Spec
	if err := json.Unmarshal([]byte(cmd.Env[idx][len(key)+1:]), &s); err != nil {
		return err
	}
	if s.Stage != 1 {
		return nil
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid != 0 {
		// The user namespace's mappings are written by this process into
		// the new one's /proc files, which belong to root while this
		// process is not dumpable (an engine never is: sandbox.Undumpable,
		// so that agents cannot read its memory): then the helper makes
		// its namespaces itself, its first start writing the second's
		// mappings.
		if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 1 {
			return nil
		}
	}
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Cloneflags |= syscall.CLONE_NEWNS
	if s.Net != nil {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if uid != 0 {
		// Root in its namespace, the user outside it (only a root keeps
		// its capabilities across the exec, and mounting needs them);
		// files keep the user as their owner.
		s.UserNS = true
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	s.Stage = 2
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	env := append([]string(nil), cmd.Env...)
	env[idx] = key + "=" + string(data)
	cmd.Env = env
	cmd.SysProcAttr = attr
	return nil
}
