//go:build linux

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var subreaper struct {
	sync.Once
	err error
}

// BecomeSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER), once: a process that an agent's process leaves
// behind (double fork, setsid, nohup) is re-parented to this process instead
// of to init, so [Sweep] still finds it. Processes re-parented here that exit
// on their own stay zombies until the next Sweep reaps them.
func BecomeSubreaper() error {
	subreaper.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

// sweepPasses bounds Sweep: a process tree forking faster than it is killed
// cannot hold it forever.
const sweepPasses = 100

// Sweep SIGKILLs every process that descends from this one, except the pids
// in keep and what descends from them, reaps those that are its direct
// children, and repeats until none is left (a process that forks while being
// swept is caught on the next pass). It returns the pids it killed, nil when
// there was nothing to do.
//
// Call it when no command of the caller is running other than those in keep:
// a direct child that is not kept is killed and reaped (its exec.Cmd.Wait
// would then fail), and so is any zombie child that is not kept.
func Sweep(keep ...int) []int {
	self := os.Getpid()
	if !anyChild() {
		// No child at all: nothing descends from this process (as a
		// subreaper, an orphan would have become a child), so there is no
		// need to read every process of the machine.
		return nil
	}
	keep = withSpared(keep)
	spared := map[int]bool{}
	for _, k := range keep {
		spared[k] = true
	}
	var killed []int
	done := map[int]bool{}
	for pass := 0; pass < sweepPasses; pass++ {
		procs := readProcsUnder(self)
		victims, zombies := descendants(procs, self, spared)
		if len(victims) == 0 && len(zombies) == 0 {
			break
		}
		for _, pid := range victims {
			if syscall.Kill(pid, syscall.SIGKILL) == nil && !done[pid] {
				done[pid] = true
				killed = append(killed, pid)
			}
		}
		// Reap the direct children (killed ones and zombies left over);
		// deeper ones are re-parented to us (as a subreaper) or to init and
		// reaped on the next pass or by init.
		for _, pid := range append(victims, zombies...) {
			if procs[pid].ppid == self {
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, 0, nil)
			}
		}
		if len(victims) == 0 {
			continue
		}
		if pass > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return killed
}

type proc struct {
	ppid   int
	zombie bool
}

// descendants returns the live descendants of root that are not spared (nor
// below a spared one), and its zombie direct children that are not spared.
func descendants(procs map[int]proc, root int, spared map[int]bool) (live, zombies []int) {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	stack := append([]int(nil), children[root]...)
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if spared[pid] || pid == root {
			continue
		}
		p := procs[pid]
		if p.zombie {
			if p.ppid == root {
				zombies = append(zombies, pid)
			}
		} else {
			live = append(live, pid)
		}
		stack = append(stack, children[pid]...)
	}
	return live, zombies
}

// readProcsUnder reads the parent and state of root's descendants, walking
// the children files down from root (cost: the size of the tree, not of the
// machine); where those files do not exist, every process of /proc.
func readProcsUnder(root int) map[int]proc {
	out := map[int]proc{}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids, ok := childrenOf(strconv.Itoa(pid))
		if !ok {
			if pid == root {
				return readProcs()
			}
			continue // gone meanwhile
		}
		for _, k := range kids {
			if _, seen := out[k]; seen {
				continue
			}
			if p, ok := readProc(k); ok {
				out[k] = p
				stack = append(stack, k)
			}
		}
	}
	return out
}

// readProcs reads every process's parent and state from /proc.
func readProcs() map[int]proc {
	out := map[int]proc{}
	d, err := os.Open("/proc")
	if err != nil {
		return out
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// readProc reads one process's parent and state from /proc/PID/stat.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return proc{ppid: ppid, zombie: f[0] == "Z" || f[0] == "X"}, true
}

// anyChild says whether this process has a child, live or a zombie, in one
// system call: waitid without waiting or reaping fails with ECHILD only
// when there is none (any thread's children count). Where that cannot be
// told, the children files are read.
func anyChild() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == nil {
		return true
	}
	if err == unix.ECHILD {
		return false
	}
	kids, ok := children()
	return !ok || len(kids) > 0
}

// children lists this process's direct children.
func children() (pids []int, ok bool) { return childrenOf("self") }

// childrenOf lists a process's direct children from /proc/PID/task/*/children
// (every thread's); ok is false where the kernel does not offer that file.
func childrenOf(pid string) (pids []int, ok bool) {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/" + pid + "/task/" + t.Name() + "/children")
		if err != nil {
			return nil, false
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}
