package ops

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
)

// IsScheduler says whether pid is a looprinter scheduler (and not a process
// that got the pid of a scheduler that died).
func IsScheduler(pid int) bool {
	if !Alive(pid) {
		return false
	}
	args, err := proc.Args(pid)
	if err != nil {
		return false
	}
	if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "looprinter") && !strings.HasSuffix(args[0], ".test") {
		return false
	}
	for _, a := range args[1:] {
		if a == "schedule" || a == "--schedule" || a == "--every" || a == "--cron" || strings.HasPrefix(a, "--every=") || strings.HasPrefix(a, "--cron=") {
			return true
		}
	}
	return false
}

// Self returns how to run this looprinter again: the path it was started
// by (so a renamed or linked binary keeps its name), else the executable.
func Self() string {
	a := os.Args[0]
	if strings.Contains(a, "/") {
		if abs, err := filepath.Abs(a); err == nil {
			return abs
		}
	} else if p, err := exec.LookPath(a); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return a
}

// Detached is a process started in its own session.
type Detached struct {
	PID  int
	Log  string
	done chan error
}

// Exited reports, without blocking, whether the process has exited and
// with what error.
func (d *Detached) Exited() (bool, error) {
	select {
	case err := <-d.done:
		d.done <- err
		return true, err
	default:
		return false, nil
	}
}

// SpawnDetached runs looprinter with args in its own session (setsid): it
// does not get the terminal's hangup, survives its parent, and its agents
// stay in its session, so `stop --now` finds them all. Its output is
// appended to log; stdin is /dev/null.
func SpawnDetached(dir, log string, args []string, env []string) (*Detached, error) {
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		return nil, err
	}
	os.Chmod(filepath.Dir(log), 0o700)
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	fmt.Fprintf(out, "\n== %s looprinter %s\n", time.Now().Format(time.RFC3339), strings.Join(args, " "))
	cmd := exec.Command(Self(), args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, out, out
	cmd.Env = env
	cmd.SysProcAttr = proc.SessionAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &Detached{PID: cmd.Process.Pid, Log: log, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	return d, nil
}

// WaitUnlocked waits until no run holds dir's lock, or the timeout passes.
func WaitUnlocked(dir string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if live, _ := loopdir.Locked(dir); !live {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StopResult says what a stop did.
type StopResult struct {
	PID    int
	Killed []int // processes killed (stop --now)
	Clean  bool  // the run wrote its final record itself
}

// Stop ends the run holding dir. Without now it sends SIGTERM, as Ctrl-C
// would: the engine stops its agent's process group, writes state and a
// loop_stop record, and exits; Stop waits up to timeout for that. With now,
// or when the run does not end in time, it kills the run and its agents'
// processes at once (see killRun), then writes the final record and state on
// the run's behalf. Only the engine (the looprinter process that holds the
// loop's lock) and processes of its run are ever signalled: never the
// process that started the run, nor anything else in its process group.
func Stop(dir string, now bool, timeout time.Duration) (StopResult, error) {
	live, pid := loopdir.Locked(dir)
	st, _ := loop.LoadState(dir)
	if !live {
		// Nothing holds the loop; a crashed run may have left agents behind.
		res := StopResult{}
		// Its pid may belong to another program by now, so only processes
		// that carry this loop's LOOPRINTER_DIR are killed.
		if st != nil && st.PID > 0 && st.Outcome == "" {
			res.Killed = loop.KillOrphans(dir, st)
			if now || len(res.Killed) > 0 {
				finalizeKilled(dir, "stopped by `looprinter stop --now` after the run had died")
			}
		}
		return res, nil
	}
	if pid <= 0 && st != nil {
		pid = st.PID
	}
	if pid <= 0 {
		return StopResult{}, fmt.Errorf("a run holds %s but its pid is unknown", dir)
	}
	if !isEngine(pid, dir) {
		return StopResult{}, fmt.Errorf("the lock of %s names pid %d, which is not the looprinter run holding it; nothing was signalled", dir, pid)
	}
	res := StopResult{PID: pid}
	if !now {
		if err := proc.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return res, err
		}
		if WaitUnlocked(dir, timeout) {
			res.Clean = true
			return res, nil
		}
	}
	res.Killed = killRun(pid, dir)
	if !WaitUnlocked(dir, 5*time.Second) {
		return res, fmt.Errorf("the run (pid %d) still holds the loop after SIGKILL", pid)
	}
	why := "stopped at once by `looprinter stop --now`; the run and its agents' processes were killed"
	if !now {
		why = fmt.Sprintf("did not stop within %s of SIGTERM; killed by `looprinter stop`", timeout)
	}
	finalizeKilled(dir, why)
	return res, nil
}

// isEngine says whether pid is the process holding dir's lock: per the
// kernel's list of the locks pid's open files hold (/proc/PID/fdinfo), else
// per /proc/locks, else (neither readable) when pid is a looprinter
// program. The lock file's content alone is not trusted: an agent may be
// able to write it.
func isEngine(pid int, dir string) bool {
	if !Alive(pid) {
		return false
	}
	file := loopdir.Dir(dir).LockFile()
	if held, known := lockHeldBy(pid, file); known {
		return held
	}
	// /proc/locks is read a page at a time, and a lock taken or released
	// between two reads can shift a line out of both: read it again before
	// saying no.
	for try := 0; try < 5; try++ {
		holders, ok := lockHolders(file)
		if !ok {
			return isLooprinter(pid)
		}
		if holders[pid] {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// isLooprinter says whether pid runs looprinter (or a test binary standing in
// for it).
func isLooprinter(pid int) bool {
	args, err := proc.Args(pid)
	if err != nil || len(args) == 0 {
		return false
	}
	arg0 := args[0]
	return strings.Contains(filepath.Base(arg0), "looprinter") || strings.HasSuffix(arg0, ".test")
}

// killRun SIGKILLs the engine pid of the run in dir and its run's
// processes, and returns the pids it killed. They are: pid; its descendants
// (agents, sandboxes, checks); processes left by its agents elsewhere, known
// by this loop's LOOPRINTER_DIR in their environment; the process groups its
// agents lead; and, when pid leads a session (a background run), the rest of
// that session. Never: this process, the ancestors of pid or of this process
// (the wrapper that started the run and whatever waits on it), this
// process's group, nor the group pid is in unless pid leads it alone.
func killRun(pid int, dir string) []int {
	self := os.Getpid()
	want := []byte("LOOPRINTER_DIR=" + dir + "\x00")
	killed := map[int]bool{}
	var out []int
	for pass := 0; pass < 3; pass++ {
		procs := readProcs()
		spare := map[int]bool{self: true}
		for _, start := range []int{self, pid} {
			for p := procs[start].ppid; p > 0 && !spare[p]; p = procs[p].ppid {
				spare[p] = true
			}
		}
		victims := map[int]bool{}
		if _, ok := procs[pid]; ok {
			victims[pid] = true
		}
		for p, pi := range procs {
			if spare[p] {
				continue
			}
			if pi.sid == pid {
				victims[p] = true
				continue
			}
			env, err := proc.Environ(p)
			if err == nil && bytes.Contains(append(env, 0), want) {
				victims[p] = true
			}
		}
		for changed := true; changed; {
			changed = false
			for p, pi := range procs {
				if !victims[p] && !spare[p] && victims[pi.ppid] {
					victims[p] = true
					changed = true
				}
			}
		}
		if len(victims) == 0 {
			break
		}
		// The engine first: it must not see its agents die and go on (write a
		// record, start the next step) before it is killed itself.
		if victims[pid] {
			proc.Kill(pid, syscall.SIGKILL)
		}
		for p := range victims {
			// A group led by a process of the run holds only the run's
			// processes (an agent's group), except the engine's own group
			// when the engine does not lead its session: a shell pipeline
			// or a wrapper may share it.
			g := procs[p].pgrp
			if g == p && g != proc.Getpgrp() && (p != pid || procs[pid].sid == pid) {
				proc.KillGroup(g, syscall.SIGKILL)
			}
			proc.Kill(p, syscall.SIGKILL)
			if !killed[p] {
				killed[p] = true
				out = append(out, p)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

type procInfo struct{ ppid, pgrp, sid int }

// finalizeKilled writes what the killed run could not: a loop_stop record
// in its record file and the outcome in state.json, under the loop's lock.
func finalizeKilled(dir, why string) {
	lock, err := loopdir.AcquireLock(dir)
	if err != nil {
		return
	}
	defer lock.Release()
	st, err := loop.LoadState(dir)
	if err != nil || st.Outcome != "" {
		return
	}
	st.Outcome, st.ExitCode, st.Summary, st.PID = loop.ReasonInterrupted, loop.ExitCodes[loop.ReasonInterrupted], why, 0
	st.Save(dir)
	ev := record.Event{V: record.Version, TS: time.Now().UTC(), Run: st.Run, Event: record.LoopStop, Reason: loop.ReasonInterrupted,
		ExitCode: record.Int(st.ExitCode), Summary: why, CostUSD: st.CostUSD, DurationMS: st.WallMS}
	if st.Shape == "" || st.Shape == "cycle" {
		ev.Cycle = st.Cycle
	}
	ev.Iteration = st.Iterations
	AppendRecord(st.Records, ev)
}
