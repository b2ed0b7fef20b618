//go:build linux

package confine

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// Under Landlock (no PID namespace) a run's setsid daemon outlives the
// run: Sweep, given the run's cgroup, kills it from the cgroup's list and
// says so; the cgroup is then empty. Without the sweep the daemon beats on.
func TestSweepEndsTheDaemonOfARunsCgroup(t *testing.T) {
	if err := sandbox.CgroupProbe(); err != nil {
		t.Skipf("no cgroup v2 this process may make children in (needs root or a delegated cgroup): %v", err)
	}
	if err := sandbox.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	g := RunCgroup(1)
	if g == nil {
		t.Fatal("no cgroup for the run")
	}
	t.Cleanup(func() { g.End() })
	beat := t.TempDir() + "/beat"
	cmd := exec.Command("/bin/sh", "-c", `(setsid sh -c 'while :; do date +%s%N > "$0"; sleep 0.02; done' "$1" >/dev/null 2>&1 &)`, "sh", beat)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(beat); err == nil || time.Now().After(deadline) {
			break
		}
	}
	var said []string
	Sweep(sandbox.Landlock, func(e record.Event) { said = append(said, e.Message) }, g)
	if len(said) != 1 || !strings.Contains(said[0], "left behind") {
		t.Errorf("Sweep said %q, want the processes it stopped", said)
	}
	a, _ := os.ReadFile(beat)
	time.Sleep(300 * time.Millisecond)
	if b, _ := os.ReadFile(beat); string(a) != string(b) {
		t.Errorf("the daemon still beats after Sweep: %s -> %s", a, b)
	}
	if pids, err := g.End(); len(pids) > 0 || err != nil {
		t.Errorf("the run's cgroup after Sweep: %v %v, want empty", pids, err)
	}
}
