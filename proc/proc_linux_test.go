package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStat(t *testing.T) {
	line := "42 (a) b (c)) S 7 8 9 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0"
	e, ok := parseStat(42, line)
	if !ok || e != (Entry{PID: 42, PPID: 7, PGID: 8, SID: 9, Start: 123456}) {
		t.Fatalf("parseStat = %+v %v", e, ok)
	}
	if e, ok := parseStat(43, "43 (z) Z 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5"); !ok || !e.Zombie {
		t.Fatalf("zombie: %+v %v", e, ok)
	}
	if _, ok := parseStat(44, "44 (short) S 1 2"); ok {
		t.Fatal("a short line parsed")
	}
}

func TestTableSeesThisProcess(t *testing.T) {
	table, err := Table()
	if err != nil {
		t.Fatal(err)
	}
	sid, _ := unix.Getsid(0)
	for _, e := range table {
		if e.PID == os.Getpid() {
			if e.PPID != os.Getppid() || e.PGID != syscall.Getpgrp() || e.SID != sid || e.Start == 0 {
				t.Fatalf("self = %+v, want ppid %d pgid %d sid %d", e, os.Getppid(), syscall.Getpgrp(), sid)
			}
			return
		}
	}
	t.Fatal("this process is not in the table")
}

// A real run on Linux: a session of its own, a child that leaves the
// session's group; Find finds both, KillGroup and Kill end them.
func TestFindAndEndARealRun(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 60 & echo started; exec sleep 60")
	cmd.SysProcAttr = SessionAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer KillGroup(cmd.Process.Pid, syscall.SIGKILL)
	buf := make([]byte, 8)
	out.Read(buf)
	leader, ok, _ := Lookup(cmd.Process.Pid)
	if !ok || leader.SID != leader.PID || leader.PGID != leader.PID {
		t.Fatalf("leader = %+v %v: not a session leader", leader, ok)
	}
	var members []Entry
	// Until the child has called setsid, however late on a loaded machine;
	// the minute only guards against a hang.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if members, err = Find(leader.PID, leader.Start, ""); err != nil {
			t.Fatal(err)
		}
		if len(members) == 2 && members[0].SID != members[1].SID {
			break // the child has called setsid
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(members) != 2 {
		t.Fatalf("members = %+v, want the leader and its setsid child", members)
	}
	for _, m := range members {
		if m.PID != leader.PID {
			defer Kill(m.PID, syscall.SIGKILL)
			if m.SID == leader.SID {
				t.Errorf("the child %+v did not leave the session", m)
			}
		}
	}
	if !Alive(leader.PID) {
		t.Fatal("leader not alive")
	}
	if err := KillGroup(leader.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if Alive(leader.PID) {
		t.Fatal("leader alive after KillGroup and Wait")
	}
}

// A setsid daemon whose parent died, on a real machine: found by its mark
// alone (rule 3 of Members) once its run's leader is gone.
func TestFindMarkedDaemonAfterTheLeaderDied(t *testing.T) {
	mark := OwnerVar + "=test." + strconv.Itoa(os.Getpid())
	cmd := exec.Command("/bin/sh", "-c", `(setsid sh -c 'echo $$; exec sleep 60' &); sleep 0.1`)
	cmd.SysProcAttr = SessionAttr()
	cmd.Env = append(os.Environ(), mark)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	leader, _, _ := Lookup(cmd.Process.Pid)
	var pid int
	fmt.Fscan(out, &pid)
	cmd.Wait()
	if pid <= 0 {
		t.Fatal("the daemon did not say its pid")
	}
	defer Kill(pid, syscall.SIGKILL)
	d, ok, _ := Lookup(pid)
	if !ok {
		t.Fatal("the daemon is gone")
	}
	if d.PPID != 1 {
		t.Skipf("the daemon was re-parented to %d (a subreaper), not to 1", d.PPID)
	}
	members, err := Find(leader.PID, leader.Start, mark)
	if err != nil {
		t.Fatal(err)
	}
	if got := PIDs(members); len(got) != 1 || got[0] != pid {
		t.Fatalf("members = %v, want the daemon %d", got, pid)
	}
	members, _ = Find(leader.PID, leader.Start, OwnerVar+"=someone.else")
	if len(members) != 0 {
		t.Fatalf("another engine's mark found %v", PIDs(members))
	}
}
