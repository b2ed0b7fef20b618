package agent

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/sandbox"
)

// started is the agent's process: cmd's own, or one the loop's run box
// started (boxed set).
type started struct {
	boxed *sandbox.BoxedProcess
}

// startCmd starts cmd, through box where there is one and it serves the
// run (cgroupFD: the run's cgroup, -1 none); where the box cannot, cmd
// starts as it is, with the box's classic environment.
func startCmd(cmd *exec.Cmd, box *sandbox.BoxedRun, cgroupFD int) (started, error) {
	if box != nil {
		p, err := box.Start(cmd, cgroupFD)
		if err == nil {
			return started{boxed: p}, nil
		}
		if !errors.Is(err, sandbox.ErrBoxOff) {
			return started{}, err
		}
		_, extra := box.Classic()
		cmd.Env = append(cmd.Env, extra...)
	}
	return started{}, cmd.Start()
}

// pid is the process group the run ends.
func (s started) pid(cmd *exec.Cmd) int {
	if s.boxed != nil {
		return s.boxed.Pid
	}
	return cmd.Process.Pid
}

// wait waits for the agent's end.
func (s started) wait(cmd *exec.Cmd) error {
	if s.boxed != nil {
		_, _, err := s.boxed.Wait()
		return err
	}
	return cmd.Wait()
}

// killer sends a signal to the run's process group.
func (s started) killer(pgid int) func(syscall.Signal) error {
	if s.boxed != nil {
		return s.boxed.Signal
	}
	return func(sig syscall.Signal) error { return proc.KillGroup(pgid, sig) }
}

// exit is the agent's exit code (-1 when a signal ended it) and the
// signal's name ("" when it exited).
func (s started) exit(werr error, cmd *exec.Cmd) (int, string) {
	if s.boxed != nil {
		code, sig, err := s.boxed.Wait()
		if sig != 0 {
			return -1, SignalName(sig)
		}
		if err != nil {
			return -1, ""
		}
		return code, ""
	}
	return exitCode(werr, cmd), signalOf(cmd)
}
