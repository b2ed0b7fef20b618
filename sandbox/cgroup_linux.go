//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CgroupPrefix starts the name of every cgroup the engine makes; a path
// read back from a saved state is only ever killed when its last element
// starts with it and it lies in a cgroup v2 hierarchy.
const CgroupPrefix = "looprinter-"

// Cgroup is the cgroup of one agent run: every process the run starts is
// born in it (clone3 puts the first one there before it runs a single
// instruction, and children inherit it), and none of them can leave it
// without write access to the cgroup tree, which no sandbox kind grants.
// So the run's processes are found and ended by the kernel's list, not by
// a mark a process could drop.
type Cgroup struct {
	Path string
	dir  *os.File
	cpu  time.Duration // what End read of cpu.stat before removing it
	read bool
}

var cgroupBase struct {
	sync.Once
	dir string
	err error
}

// CgroupProbe says whether runs can get a cgroup of their own here: a
// cgroup v2 hierarchy where this process may make a child of its own
// cgroup (as root, or in a cgroup delegated to the user). The probe runs
// once per process.
func CgroupProbe() error {
	_, err := cgroupHome()
	return err
}

func cgroupHome() (string, error) {
	cgroupBase.Do(func() {
		cgroupBase.dir, cgroupBase.err = findCgroupHome()
	})
	return cgroupBase.dir, cgroupBase.err
}

func findCgroupHome() (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	rel := ""
	found := false
	for _, line := range strings.Split(string(own), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = r, true
			break
		}
	}
	if !found {
		return "", errors.New("this process has no cgroup v2 membership")
	}
	home := filepath.Join(mnt, filepath.Clean("/"+rel))
	if _, err := os.Stat(filepath.Join(home, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("own cgroup %s is not visible: %v", home, err)
	}
	probe, err := os.MkdirTemp(home, CgroupPrefix+"probe-")
	if err != nil {
		return "", fmt.Errorf("cannot make a cgroup under %s (needs root or a delegated cgroup): %v", home, err)
	}
	// A process can be started in it (clone3 with CLONE_INTO_CGROUP:
	// Linux 5.7 or later), or no run could start at all.
	startErr := startIn(probe)
	if err := rmdirCgroup(probe, time.Now().Add(time.Second)); err != nil {
		return "", fmt.Errorf("cannot remove the probe cgroup %s: %v", probe, err)
	}
	if startErr != nil {
		return "", fmt.Errorf("cannot start a process in a cgroup of its own here (Linux 5.7 or later): %v", startErr)
	}
	return home, nil
}

// rmdirCgroup removes the empty cgroup at path, until deadline: the
// kernel refuses it (EBUSY) until its killed processes are reaped, and
// for a moment after its last process was.
func rmdirCgroup(path string, deadline time.Time) error {
	for {
		err := syscall.Rmdir(path)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// probeLeft is how old an empty probe cgroup must be for PruneCgroups to
// take it for one a killed engine left (a probe lasts a moment).
const probeLeft = time.Minute

// startIn runs /bin/sh -c 'exit 0' born in the cgroup at path.
func startIn(path string) error {
	dir, err := os.Open(path)
	if err != nil {
		return err
	}
	defer dir.Close()
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
	return cmd.Run()
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (also in a
// v1/v2 hybrid, where it is /sys/fs/cgroup/unified).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		line := sc.Text()
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) >= 5 {
			return unescapeMount(fields[4]), nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NewCgroup makes the cgroup of one run, a new one named
// CgroupPrefix+name+"-" and a random tail, below this process's own
// cgroup. It fails where CgroupProbe does.
func NewCgroup(name string) (*Cgroup, error) {
	home, err := cgroupHome()
	if err != nil {
		return nil, err
	}
	path, err := os.MkdirTemp(home, CgroupPrefix+name+"-")
	if err != nil {
		return nil, err
	}
	dir, err := os.Open(path)
	if err != nil {
		syscall.Rmdir(path)
		return nil, err
	}
	return &Cgroup{Path: path, dir: dir}, nil
}

// FD is the descriptor to start the run's first process in
// (SysProcAttr.CgroupFD); -1 when g is nil.
func (g *Cgroup) FD() int {
	if g == nil || g.dir == nil {
		return -1
	}
	return int(g.dir.Fd())
}

// End kills every process of the cgroup, waits until it is empty and
// removes it. It returns the processes that were in it.
func (g *Cgroup) End() ([]int, error) {
	if g == nil {
		return nil, nil
	}
	if g.dir != nil {
		g.dir.Close()
		g.dir = nil
	}
	return endCgroup(g.Path, func() { g.cpu, g.read = cgroupCPU(g.Path) })
}

// CPU is the CPU (user and system) every process of the cgroup used so
// far, from its cpu.stat (usage_usec; kept by cgroup v2 itself, with or
// without the cpu controller); once End ran, what it read just before it
// removed the cgroup. false when it cannot be read.
func (g *Cgroup) CPU() (time.Duration, bool) {
	if g == nil {
		return 0, false
	}
	if g.read {
		return g.cpu, true
	}
	return cgroupCPU(g.Path)
}

// cgroupCPU reads usage_usec of the cpu.stat of the cgroup at path.
func cgroupCPU(path string) (time.Duration, bool) {
	b, err := os.ReadFile(filepath.Join(path, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return 0, false
			}
			return time.Duration(n) * time.Microsecond, true
		}
	}
	return 0, false
}

// onCgroupEnd, when set (a benchmark), is told of each cgroup EndCgroup
// emptied, before it is removed.
var onCgroupEnd func(path string)

// cgroupDrain bounds the wait for a killed cgroup to empty: SIGKILL is
// not refusable, but a process in uninterruptible sleep dies when its
// system call ends.
const cgroupDrain = 10 * time.Second

// EndCgroup kills every process of the cgroup at path (one the engine
// made: its name starts with CgroupPrefix, and it lies in a cgroup v2
// hierarchy), waits until it is empty and removes it. A path that does
// not exist is nothing to do. It returns the processes that were in it.
func EndCgroup(path string) ([]int, error) { return endCgroup(path, nil) }

// endCgroup is EndCgroup; emptied, when set, is called once the cgroup
// has no process left, before it is removed.
func endCgroup(path string, emptied func()) ([]int, error) {
	if !strings.HasPrefix(filepath.Base(path), CgroupPrefix) {
		return nil, fmt.Errorf("%s is not a cgroup of looprinter's", path)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	const cgroup2Magic = 0x63677270
	if st.Type != cgroup2Magic {
		return nil, fmt.Errorf("%s is not in a cgroup v2 hierarchy", path)
	}
	deadline := time.Now().Add(cgroupDrain)
	n, err := drainCgroup(path, deadline, nil)
	if err != nil {
		return n, err
	}
	// A killed process leaves the cgroup's list when it is reaped; rmdir
	// is refused until then (EBUSY) even with no live process.
	if emptied != nil {
		emptied()
	}
	if onCgroupEnd != nil {
		onCgroupEnd(path)
	}
	if err := rmdirCgroup(path, deadline); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("remove cgroup %s: %v", path, err)
	}
	return n, nil
}

// drainCgroup kills every process of the cgroup at path and waits until
// none is left (cgroup.events), until deadline; between, when set, runs
// between two looks (a reap of what was killed). It returns the processes
// that were in it. A cgroup with no process is one read: nothing can enter
// it (the engine alone starts processes in it, and no run can move one
// there).
func drainCgroup(path string, deadline time.Time, between func()) ([]int, error) {
	if !cgroupPopulated(path) {
		return nil, nil
	}
	n := cgroupPids(path)
	for {
		killCgroup(path)
		if between != nil {
			between()
		}
		if !cgroupPopulated(path) {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("cgroup %s still has processes %v after %s", path, cgroupPids(path), cgroupDrain)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// PruneCgroups tidies the cgroups of engines that are gone (named
// CgroupPrefix+PID+"-…" below this process's cgroup, PID no longer
// alive): a killed engine leaves its cgroups behind. An empty one is
// removed. One of a check or of a box (PID+"-check-…", PID+"-box-…") is
// ended whole (killCgroup): no loop's state names it, and what is in it
// judges for an engine that is gone (bubblewrap, killed between its
// start and its command's, can even be left waiting for ever as the
// first process of a PID namespace of its own); it is killed without
// waiting, and removed here once its processes are reaped (by this
// prune or the next). A run's that still has processes is kept: it is a
// crashed loop's, ended by that loop's next start or `looprinter stop`,
// which say what they ended. An empty probe cgroup a minute old (an
// engine killed while it probed) is removed. It returns how many it
// removed.
func PruneCgroups() int {
	home, err := cgroupHome()
	if err != nil {
		return 0
	}
	ents, _ := os.ReadDir(home)
	n := 0
	for _, d := range ents {
		rest, ok := strings.CutPrefix(d.Name(), CgroupPrefix)
		if !ok || !d.IsDir() {
			continue
		}
		if strings.HasPrefix(rest, "probe-") {
			// An engine killed while it probed left its probe.
			path := filepath.Join(home, d.Name())
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > probeLeft && !cgroupPopulated(path) && syscall.Rmdir(path) == nil {
				n++
			}
			continue
		}
		pidText, kind, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // its engine lives
		}
		path := filepath.Join(home, d.Name())
		if strings.HasPrefix(kind, "check-") || strings.HasPrefix(kind, "box-") {
			killCgroup(path)
		}
		if !cgroupPopulated(path) && syscall.Rmdir(path) == nil {
			n++
		}
	}
	return n
}

// killCgroup kills every process of the cgroup at path and does not
// wait for them: cgroup.kill, or before Linux 5.14 (no cgroup.kill)
// freeze, then kill each (a frozen process cannot fork away from the
// list).
func killCgroup(path string) {
	if os.WriteFile(filepath.Join(path, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	os.WriteFile(filepath.Join(path, "cgroup.freeze"), []byte("1"), 0)
	for _, pid := range cgroupPids(path) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	os.WriteFile(filepath.Join(path, "cgroup.freeze"), []byte("0"), 0)
}

// cgroupPopulated reads cgroup.events: "populated 1" while a process of
// the cgroup (or of one below it) lives.
func cgroupPopulated(path string) bool {
	b, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// cgroupPids lists the processes of the cgroup and of every one below it.
func cgroupPids(path string) []int {
	var pids []int
	filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}
