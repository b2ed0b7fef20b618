package ops

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A stale scheduler pid that now belongs to another program must never be
// taken for a scheduler (stop would signal it).
func TestIsSchedulerChecksTheCommandLine(t *testing.T) {
	start := func(argv0 string, args ...string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", args...)
		cmd.Args[0] = argv0
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		// Until the child has exec'd, its command line is still the test
		// binary's: wait for the one it was started with.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
			if strings.HasPrefix(string(b), argv0+"\x00") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the child never showed the command line %q: %q", argv0, b)
			}
		}
		return cmd
	}
	other := start("sleep", "-c", "sleep 30")
	if IsScheduler(other.Process.Pid) {
		t.Error("a process that is not looprinter was taken for a scheduler")
	}
	run := start("/usr/local/bin/looprinter", "-c", "sleep 30", "run")
	if IsScheduler(run.Process.Pid) {
		t.Error("a looprinter run was taken for a scheduler")
	}
	sched := start("/usr/local/bin/looprinter", "-c", "sleep 30", "schedule")
	if !IsScheduler(sched.Process.Pid) {
		t.Error("a looprinter scheduler was not recognised")
	}
	if IsScheduler(0) || IsScheduler(-1) {
		t.Error("no pid is a scheduler")
	}
}
