// Package proc is the process layer: how a run's processes are started and
// ended, one API with a file per platform.
//
//   - SessionAttr / GroupAttr start a command in a session or a process
//     group of its own (the agent's session is the group the engine ends);
//   - KillGroup / Kill signal a group or a process, Alive says whether a pid
//     is a live process;
//   - Table reads the process table (parent, group, session, start time of
//     every process) and Members finds every process of a run in it,
//     including daemons that left the run's session (see Members);
//   - Supported says whether loops can run on this platform at all.
//
// Linux reads /proc (and the engine is a child subreaper, see the sandbox
// package, so an escaped process stays its descendant); macOS reads the
// kernel's process table with sysctl(kern.proc.all). Windows builds but runs
// no loop: every entry point that would start or end a run's process
// returns ErrUnsupported.
package proc

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// ErrUnsupported is what every platform without a process layer returns.
var ErrUnsupported = errors.New("looprinter runs loops on Linux and macOS; Windows is not supported yet")

// OwnerVar is the environment variable that marks the processes an engine
// started (macOS; see Members): its value is the engine's pid and start
// time, "PID.START". An engine drops an inherited one before it sets its own.
const OwnerVar = "LOOPRINTER_OWNER"

// Entry is one process of the table.
type Entry struct {
	PID, PPID int
	PGID, SID int
	// Start is when the process started, in the platform's unit (clock
	// ticks since boot on Linux, microseconds since the epoch on macOS):
	// compare it only with other entries of the same machine.
	Start  int64
	Zombie bool
}

// Members returns the processes of the run led by root (root itself when it
// is still in the table), in the order found, given the table of every
// process. root started at rootStart. marked says whether a process carries
// the run's owner mark (OwnerVar in its environment); it is asked only about
// the few processes no other rule settles, and may be nil.
//
// A process is a member when, in the table:
//
//  1. its parent is a member (a child, whatever it did with its session or
//     group since);
//  2. its process group or its session is the pid of a member, or of root
//     even when root is gone, and it started no earlier than root (root's
//     own id counts only when root leads its session, as an agent does: a
//     process a shell started leads at most a group that the rest of its
//     pipeline shares): a group
//     or session id is a pid that no new process gets while the group or
//     session lives, so a process in one is in it because a member put it
//     there. This finds what a double fork left behind in the run's session
//     after its parent died and it was re-parented (to init, launchd or a
//     subreaper);
//  3. it was re-parented to pid 1 (its parent died), started no earlier
//     than root, and carries the run's mark. This is the setsid daemon: a
//     process that forked, called setsid (a new session and group, its own
//     pid) and lost its parent keeps no id of the run, so the kernel's table
//     alone cannot tell it from a service launchd started meanwhile; what it
//     keeps is the environment it inherited, which holds the owner mark
//     (the engine's pid and start time, which no other engine has). The
//     start-time bound keeps the question to the few processes started
//     since the run began, and a marked process older than the run (a pid
//     reused) out.
//
// Rules 1 and 2 are applied until nothing changes, so what a daemon starts
// is a member too.
func Members(table []Entry, root int, rootStart int64, marked func(Entry) bool) []Entry {
	byPID := make(map[int]Entry, len(table))
	for _, e := range table {
		byPID[e.PID] = e
	}
	ids := map[int]bool{root: true} // pids whose group or session is the run's
	in := map[int]bool{}
	var out []Entry
	add := func(e Entry) {
		in[e.PID] = true
		ids[e.PID] = true
		out = append(out, e)
	}
	if e, ok := byPID[root]; ok {
		switch {
		case rootStart != 0 && e.Start != rootStart:
			// root's pid is another process's now: the run's group and
			// session are gone with it, only marked daemons are left.
			delete(ids, root)
		case e.SID != root:
			// root does not lead its session (an engine started by a
			// shell): its group may hold processes it did not start (the
			// rest of a pipeline), so rule 2 does not apply to root.
			add(e)
			delete(ids, root)
		default:
			add(e)
		}
	}
	asked := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, e := range table {
			if in[e.PID] || e.PID == 1 || e.PID == 0 {
				continue
			}
			switch {
			case in[e.PPID] && e.Start >= byPID[e.PPID].Start:
			case (ids[e.PGID] || ids[e.SID]) && e.Start >= rootStart:
			case e.PPID == 1 && e.Start >= rootStart && marked != nil && !asked[e.PID]:
				asked[e.PID] = true
				if !marked(e) {
					continue
				}
			default:
				continue
			}
			add(e)
			changed = true
		}
	}
	return out
}

// OwnerMark is the value of OwnerVar for the engine pid that started at
// start.
func OwnerMark(pid int, start int64) string {
	return strconv.Itoa(pid) + "." + strconv.FormatInt(start, 10)
}

// EnvHas says whether env, NUL-separated VAR=value strings (as the kernel
// gives a process's environment), holds kv exactly.
func EnvHas(env []byte, kv string) bool {
	for _, s := range strings.Split(string(env), "\x00") {
		if s == kv {
			return true
		}
	}
	return false
}

// PIDs returns the pids of entries, sorted.
func PIDs(entries []Entry) []int {
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.PID)
	}
	sort.Ints(out)
	return out
}

// Find reads the process table and returns the members of the run led by
// root, started at rootStart (see Members); mark, when not empty, is the
// OwnerVar=value that marks the run's processes in their environment.
func Find(root int, rootStart int64, mark string) ([]Entry, error) {
	table, err := Table()
	if err != nil {
		return nil, err
	}
	var marked func(Entry) bool
	if mark != "" {
		marked = func(e Entry) bool {
			env, err := Environ(e.PID)
			return err == nil && EnvHas(env, mark)
		}
	}
	return Members(table, root, rootStart, marked), nil
}

// Victims splits a sweep's members (see Members, root being the engine,
// self): the live ones to kill and the zombies that are self's children to
// reap, leaving out self, the pids in keep and every member below a kept
// one.
func Victims(members []Entry, self int, keep []int) (live, zombies []Entry) {
	spared := map[int]bool{self: true}
	for _, k := range keep {
		spared[k] = true
	}
	byPID := make(map[int]Entry, len(members))
	for _, m := range members {
		byPID[m.PID] = m
	}
	below := func(e Entry) bool {
		seen := map[int]bool{}
		for p := e.PPID; p > 1 && !seen[p]; p = byPID[p].PPID {
			if p != self && spared[p] {
				return true
			}
			seen[p] = true
			if _, ok := byPID[p]; !ok {
				return false
			}
		}
		return false
	}
	for _, m := range members {
		if spared[m.PID] || below(m) {
			continue
		}
		if m.Zombie {
			if m.PPID == self {
				zombies = append(zombies, m)
			}
			continue
		}
		live = append(live, m)
	}
	return live, zombies
}
