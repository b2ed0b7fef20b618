package confine

import (
	"fmt"
	"os"
	"sync"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// What an agent run leaves behind: nothing it started outlives it. Its
// cgroup, where the machine gives one, holds every process it started;
// the sweep ends those that left its process tree; a crashed engine's run
// is ended at the restart (KillOrphans). kind is the sandbox in force:
// under bwrap the run's PID namespace already ended its processes.

// pruneCgroups removes, once per process, the empty cgroups that killed
// engines left.
var pruneCgroups sync.Once

// RunCgroup makes the cgroup of this engine's agent run seq, where the
// machine gives one; nil where it does not (doctor says what is then not
// guaranteed).
func RunCgroup(seq int) *sandbox.Cgroup {
	pruneCgroups.Do(func() { sandbox.PruneCgroups() })
	g, err := sandbox.NewCgroup(fmt.Sprintf("%d-%d", os.Getpid(), seq))
	if err != nil {
		return nil
	}
	return g
}

// EndCgroup ends what is left in a run's cgroup g (after the sweep, only
// what had left this process's tree) and removes it.
func EndCgroup(g *sandbox.Cgroup, kind string, emit func(record.Event)) {
	pids, err := g.End()
	if len(pids) > 0 && kind != sandbox.Bwrap {
		what := "1 process"
		if len(pids) != 1 {
			what = fmt.Sprintf("%d processes", len(pids))
		}
		emit(record.Event{Event: record.Warning, Message: fmt.Sprintf("stopped %s of the agent run's cgroup that had left its process tree", what)})
	}
	if err != nil {
		emit(record.Event{Event: record.Warning, Message: "the agent run's cgroup: " + err.Error()})
	}
}

// Sweep ends every process the last agent run left behind (a daemon it
// started with setsid, a double fork): none may touch the files while they
// are judged. groups are the cgroups of the runs since the last sweep,
// when each had one: the sweep then reads their lists of processes
// (sandbox.SweepCgroups), not the process table. Under the sandbox off the
// agent runs as the engine's user, who may move a process out of its
// cgroup: there, and where a run had no cgroup (nil groups), the process
// tree is walked from this process (sandbox.Sweep), as a child subreaper
// finds what left it.
func Sweep(kind string, emit func(record.Event), groups ...*sandbox.Cgroup) {
	var n []int
	if len(groups) > 0 && (kind == sandbox.Bwrap || kind == sandbox.Landlock) {
		n = sandbox.SweepCgroups(groups)
	} else {
		n = sandbox.Sweep()
	}
	// Under bwrap the sweep only reaps what the sandbox's own teardown left
	// to this process (a subreaper); elsewhere what it kills was escaping.
	if len(n) > 0 && kind != sandbox.Bwrap {
		emit(record.Event{Event: record.Warning, Message: fmt.Sprintf("stopped %d processes the agent run left behind", len(n))})
	}
}

// KillOrphans kills what is left of a crashed run's agent: every process
// of its cgroup, where it had one (the kernel's list: nothing in it could
// leave), and the processes of its process group pgid that carry the loop
// folder dir's LOOPRINTER_DIR. It returns the pids it killed.
func KillOrphans(dir, cgroup string, pgid int) []int {
	var killed []int
	if cgroup != "" {
		pids, _ := sandbox.EndCgroup(cgroup)
		killed = append(killed, pids...)
	}
	if pgid != 0 {
		killed = append(killed, killOrphans(pgid, dir)...)
	}
	return killed
}
