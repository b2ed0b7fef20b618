package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/spec"
)

// A step runs in a process of its own when Worker.Exec is set: after each
// agent run the engine ends every process that descends from the process it
// runs in (what an agent left behind), so two steps in one process — a
// worker with more than one slot — would end each other's agents, checks
// and git commands.

// stepEnv marks the process that runs one step for a worker.
const stepEnv = "LOOPRINTER_FLEET_STEP"

// childRequest is what a worker sends to its step process on standard input.
type childRequest struct {
	LoopFile   string   `json:"loop_file"` // absolute
	Run        string   `json:"run"`
	Notes      []string `json:"notes,omitempty"`
	ReviewBase string   `json:"review_base,omitempty"`
}

// childReply is what the step process prints on standard output.
type childReply struct {
	Outcome *loop.Outcome `json:"outcome,omitempty"`
	Err     string        `json:"error,omitempty"`
}

// IsStepProcess says whether this process was started by a worker to run
// one step (then the program calls StepProcess and exits with its code).
func IsStepProcess() bool { return os.Getenv(stepEnv) != "" }

// StepProcess runs the step a worker asked for on standard input and prints
// its outcome on standard output; SIGTERM or SIGINT interrupt it as they
// interrupt a local run. hooks are the engine's hooks, as `run` gives them.
func StepProcess(stdin io.Reader, stdout io.Writer, hooks func(*spec.Loop) []loop.Hook) int {
	os.Unsetenv(stepEnv) // not for the agents and checks it starts
	reply := func(r childReply) int {
		if err := json.NewEncoder(stdout).Encode(r); err != nil {
			return 1
		}
		return 0
	}
	var req childRequest
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		return reply(childReply{Err: "the step's request: " + err.Error()})
	}
	l, err := spec.Load(req.LoopFile)
	if err != nil {
		return reply(childReply{Err: err.Error()})
	}
	if req.ReviewBase != "" {
		l.Review.Base = req.ReviewBase
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var hs []loop.Hook
	if hooks != nil {
		hs = hooks(l)
	}
	o, err := loop.RunStep(ctx, l, loop.StepOptions{Options: loop.Options{Hooks: hs}, Run: req.Run, Notes: req.Notes})
	if err != nil {
		return reply(childReply{Err: err.Error()})
	}
	return reply(childReply{Outcome: o})
}

// runStep runs one engine step: in a process of its own when w.Exec is
// set, else in this one.
func (w *Worker) runStep(ctx context.Context, l *spec.Loop, run string, notes []string) (*loop.Outcome, error) {
	if w.Exec == "" {
		var hooks []loop.Hook
		if w.Hooks != nil {
			hooks = w.Hooks(l)
		}
		return loop.RunStep(ctx, l, loop.StepOptions{Options: loop.Options{Hooks: hooks}, Run: run, Notes: notes})
	}
	req, err := json.Marshal(childRequest{LoopFile: l.Path, Run: run, Notes: notes, ReviewBase: l.Review.Base})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(w.Exec)
	cmd.Env = append(os.Environ(), stepEnv+"=1")
	cmd.Stdin = bytes.NewReader(req)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	// The step dies with its worker, as it did when it ran inside it.
	cmd.SysProcAttr = diesWithParent()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the step's process: %w", err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM) // interrupted as a local run is
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	var r childReply
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		if werr == nil {
			werr = err
		}
		return nil, fmt.Errorf("the step's process failed: %v: %s", werr, strings.TrimSpace(out.String()))
	}
	if r.Err != "" {
		return nil, errors.New(r.Err)
	}
	return r.Outcome, nil
}
