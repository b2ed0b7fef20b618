package sandbox

import (
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// Usage is the CPU (user and system) the processes of one check used, and
// where the figure came from.
type Usage struct {
	CPU  time.Duration
	From string // UsageCgroup, UsageBox or UsageTree; "" when none is known
}

// Where a check's CPU figure came from.
const (
	// UsageCgroup: the usage_usec of the check's own cgroup's cpu.stat,
	// read once its processes are gone, before the cgroup is removed:
	// every process the check started, wherever it went (a double-forked
	// daemon, a process in a PID namespace of its own).
	UsageCgroup = "cgroup"
	// UsageBox: the usage_usec of the cgroup of the check box's server
	// (one bubblewrap for a gate's checks), read before the check was sent
	// and after its answer: a box runs its checks one at a time and every
	// process of a check is gone when the server answers, so the difference
	// is the check's, with the server's own work for it (its namespaces and
	// layers); the box's start is the first check's.
	UsageBox = "box"
	// UsageTree: no cgroup here; the rusage of the check's process tree as
	// the engine reaped it (its child and what that child waited for). A
	// process that left the tree (a double-forked daemon, reparented away)
	// is missed.
	UsageTree = "rusage"
)

// Add is u and v summed; From names both sources when they differ.
func (u Usage) Add(v Usage) Usage {
	switch {
	case u.From == "" || u.From == v.From:
		u.From = v.From
	case v.From != "":
		u.From = mixedFrom(u.From, v.From)
	}
	u.CPU += v.CPU
	return u
}

// mixedFrom names the sources of a and b once each, in the order of the
// constants, joined by "+".
func mixedFrom(a, b string) string {
	has := strings.Split(a+"+"+b, "+")
	var out []string
	for _, k := range []string{UsageCgroup, UsageBox, UsageTree} {
		if slices.Contains(has, k) {
			out = append(out, k)
		}
	}
	return strings.Join(out, "+")
}

// usageOf keeps, per command of a box, the CPU its cgroup counted (read
// by the command's cleanup), until Usage takes it.
type usageOf struct {
	mu sync.Mutex
	m  map[*exec.Cmd]Usage
}

func (u *usageOf) put(cmd *exec.Cmd, v Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[*exec.Cmd]Usage{}
	}
	u.m[cmd] = v
}

func (u *usageOf) take(cmd *exec.Cmd) (Usage, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	v, ok := u.m[cmd]
	delete(u.m, cmd)
	return v, ok
}

// Usage is the CPU of a command of the box's (Command, SetupCommand)
// once its cleanup ran: its cgroup's figure where it had one, else its
// process tree's (TreeUsage). b may be nil.
func (b *CheckBox) Usage(cmd *exec.Cmd) Usage {
	if b != nil {
		if v, ok := b.usage.take(cmd); ok {
			return v
		}
	}
	return TreeUsage(cmd)
}
