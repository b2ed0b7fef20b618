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

	procs "github.com/looprinter/looprinter/proc"
)

// needCgroup skips where this process may not make cgroups (as an
// unprivileged user without a delegated cgroup): what the engine then
// does not guarantee is doctor's to say, and TestGuaranteesNameCgroup
// checks it does.
func needCgroup(t *testing.T) {
	t.Helper()
	if err := CgroupProbe(); err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
}

// A process born in a run's cgroup that leaves its session and its
// process group, and clears its environment, is still ended by End: the
// cgroup's list is the kernel's.
func TestCgroupEndsEscapedDaemons(t *testing.T) {
	needCgroup(t)
	g, err := NewCgroup("test-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(g.Path), CgroupPrefix) {
		t.Fatalf("cgroup %s does not carry the prefix", g.Path)
	}
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	cmd := exec.Command("sh", "-c", `setsid env -i sh -c 'echo $$ > "$0"; exec sleep 300' "$1" </dev/null >/dev/null 2>&1 & exit 0`, "sh", pidFile)
	cmd.SysProcAttr = procs.SessionAttr()
	procs.IntoCgroup(cmd.SysProcAttr, g.FD())
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var daemon int
	for deadline := time.Now().Add(20 * time.Second); daemon == 0; {
		b, _ := os.ReadFile(pidFile)
		daemon, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if daemon == 0 && time.Now().After(deadline) {
			t.Fatal("the daemon never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
	if !procs.Alive(daemon) {
		t.Fatal("the daemon is not alive before End")
	}
	pids, err := g.End()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range pids {
		found = found || p == daemon
	}
	if !found {
		t.Errorf("End returned %v, without the daemon %d", pids, daemon)
	}
	if procs.Alive(daemon) {
		t.Errorf("the daemon %d outlived End", daemon)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s is still there: %v", g.Path, err)
	}
}

// EndCgroup refuses what is not a cgroup of the engine's: a state read
// back names the path, and no other cgroup or folder may be emptied.
func TestEndCgroupRefusesOthers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), CgroupPrefix+"x")
	os.Mkdir(dir, 0o755)
	if _, err := EndCgroup(dir); err == nil || !strings.Contains(err.Error(), "not in a cgroup v2 hierarchy") {
		t.Errorf("a plain folder: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the folder was touched: %v", err)
	}
	if _, err := EndCgroup("/sys/fs/cgroup/unified/system.slice"); err == nil || !strings.Contains(err.Error(), "not a cgroup of looprinter's") {
		t.Errorf("another cgroup: %v", err)
	}
	if pids, err := EndCgroup(filepath.Join(t.TempDir(), CgroupPrefix+"gone")); err != nil || pids != nil {
		t.Errorf("a cgroup that is gone: %v %v", pids, err)
	}
}

// A killed engine's empty cgroup is removed; a live engine's is kept.
func TestPruneCgroups(t *testing.T) {
	needCgroup(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	home, _ := cgroupHome()
	gone := filepath.Join(home, CgroupPrefix+strconv.Itoa(dead.Process.Pid)+"-1-test")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(gone) })
	mine, err := NewCgroup(strconv.Itoa(os.Getpid()) + "-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mine.End() })
	PruneCgroups()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead engine's empty cgroup stayed: %v", err)
	}
	if _, err := os.Stat(mine.Path); err != nil {
		t.Errorf("a live engine's cgroup was removed: %v", err)
	}
}

// What Landlock guarantees about leftover processes follows the cgroup
// probe: with one, a killed engine's daemons are ended; without, doctor
// says they can outlive it.
func TestGuaranteesNameCgroup(t *testing.T) {
	g := strings.Join(Guarantees(Landlock), "\n")
	if CgroupProbe() == nil {
		if !strings.Contains(g, "each run in a cgroup of its own") || strings.Contains(g, "can outlive an engine") {
			t.Errorf("a cgroup here, but the guarantees say:\n%s", g)
		}
		return
	}
	if !strings.Contains(g, "no cgroup either") || !strings.Contains(g, "can outlive an engine that is killed") {
		t.Errorf("no cgroup here, but the guarantees say:\n%s", g)
	}
}
