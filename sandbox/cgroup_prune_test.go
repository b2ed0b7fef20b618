//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A killed engine's check and box cgroups are ended by the next engine's
// prune, processes and all: a bubblewrap killed between its start and its
// command's can wait for ever as the first process of its own PID
// namespace, and no loop's state names these cgroups. A dead engine's run
// cgroup with a process in it is kept (that loop's next start ends it and
// says so), and so is every cgroup of an engine that lives.
func TestPruneCgroupsEndsDeadEnginesBoxes(t *testing.T) {
	needCgroup(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	home, _ := cgroupHome()
	gone := strconv.Itoa(dead.Process.Pid)
	mine := strconv.Itoa(os.Getpid())
	type held struct {
		path string
		cmd  *exec.Cmd
		done chan error
	}
	hold := func(name string) *held {
		path := filepath.Join(home, CgroupPrefix+name)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { EndCgroup(path) })
		dir, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd()), Setpgid: true}
		if os.Getuid() == 0 {
			// As the stuck bubblewrap: the first process of a PID
			// namespace of its own.
			cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &held{path: path, cmd: cmd, done: make(chan error, 1)}
		go func() { h.done <- cmd.Wait() }()
		return h
	}
	check := hold(gone + "-check-t1")
	box := hold(gone + "-box-t2")
	run := hold(gone + "-7-t3")
	live := hold(mine + "-check-t4")
	liveBox := hold(mine + "-box-t5")

	PruneCgroups()
	for _, h := range []*held{check, box} {
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: its process still runs after the prune", h.path)
		}
	}
	PruneCgroups() // the first killed them; reaped, they are removed now
	for _, h := range []*held{check, box} {
		if _, err := os.Stat(h.path); !os.IsNotExist(err) {
			t.Errorf("%s stayed after the prune: %v", h.path, err)
		}
	}
	for _, h := range []*held{run, live, liveBox} {
		select {
		case err := <-h.done:
			t.Errorf("%s: its process was ended (%v)", h.path, err)
		default:
		}
		if _, err := os.Stat(h.path); err != nil {
			t.Errorf("%s was removed: %v", h.path, err)
		}
	}
}

// The loop's run box is born in a cgroup of its own named for this
// engine (PID+"-box-…"), which the prune of a next engine ends should
// this one be killed; closing the box removes it.
func TestRunBoxInACgroupOfItsOwn(t *testing.T) {
	needCgroup(t)
	_, p, _ := boxLayout(t)
	if out, code, _ := boxedRun(t, p, "true", nil); code != 0 {
		t.Fatalf("the run: %d %s", code, out)
	}
	boxes.Lock()
	var x *agentBox
	if len(boxes.all) == 1 {
		x = boxes.all[0]
	}
	boxes.Unlock()
	if x == nil || x.cmd == nil || x.cmd.Process == nil {
		t.Fatalf("no run box kept after the run")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(x.cmd.Process.Pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	want := CgroupPrefix + strconv.Itoa(os.Getpid()) + "-box-"
	if x.g == nil || !strings.Contains(string(b), "/"+want) {
		t.Fatalf("the run box's bubblewrap is in %q, not a cgroup %s…", b, want)
	}
	path := x.g.Path
	CloseRunBoxes()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the box's cgroup stayed once the box was closed: %v", err)
	}
}

// An empty probe cgroup a minute old is one an engine killed while it
// probed left: the prune removes it. A fresh one may be a live engine's
// probe and stays.
func TestPruneCgroupsRemovesOldProbes(t *testing.T) {
	needCgroup(t)
	home, _ := cgroupHome()
	old, err := os.MkdirTemp(home, CgroupPrefix+"probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(old) })
	fresh, err := os.MkdirTemp(home, CgroupPrefix+"probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(fresh) })
	then := time.Now().Add(-2 * probeLeft)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Skipf("the cgroup file system keeps no time set here: %v", err)
	}
	PruneCgroups()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an old probe cgroup stayed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh probe cgroup was removed: %v", err)
	}
}
