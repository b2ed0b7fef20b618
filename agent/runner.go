package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
)

// MaxLine is the longest line handed to a parser; the transcript always gets
// every byte.
const MaxLine = 1 << 20

// MaxTranscript caps what one run writes to its transcript, so an agent
// stuck printing cannot fill the disk overnight. Output past it is still
// read (and parsed) but not stored.
const MaxTranscript = 2 << 30

// stderrTail is how much of standard error is kept for classification.
const stderrTail = 8 << 10

// pipeDrain bounds how long the runner waits for the output pipes to close
// after the agent's process group is gone: a grandchild that escaped the group
// and still holds a pipe cannot hang the engine.
const pipeDrain = 2 * time.Second

// sessionVars are variables that make a CLI believe it runs nested inside
// another agent session; the child must not inherit them.
var sessionVars = []string{
	"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT",
	"CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_THREAD_ID",
	"GEMINI_CLI", "LOOPRINTER_PHASE", "LOOPRINTER_CYCLE", "LOOPRINTER_ITERATION",
	"LOOPRINTER_TASK", "LOOPRINTER_DIR", "LOOPRINTER_PROMPT_FILE", "LOOPRINTER_ATTEMPT",
}

// ChildEnv builds a child's environment: the engine's own, minus agent-session
// variables, plus the LOOPRINTER_* variables and the request's env.
func ChildEnv(req Request) []string {
	drop := map[string]bool{proc.OwnerVar: true}
	for _, k := range sessionVars {
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] {
			continue
		}
		if req.Wrap != nil && sandbox.IsServiceEnv(k) {
			// A confined agent reaches none of the user's services (an ssh
			// or gpg agent, tmux, the session bus): their sockets are not
			// in its view, and their variables are not in its environment.
			continue
		}
		if _, over := req.Env[k]; over {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"LOOPRINTER_PHASE="+req.Phase,
		"LOOPRINTER_CYCLE="+strconv.Itoa(req.Cycle),
		"LOOPRINTER_ITERATION="+strconv.Itoa(req.Iteration),
		"LOOPRINTER_TASK="+req.Task,
		"LOOPRINTER_DIR="+req.Dir,
		"LOOPRINTER_PROMPT_FILE="+req.PromptFile,
	)
	if req.Attempt > 0 {
		// One of a task's attempts run at once (best of N).
		env = append(env, "LOOPRINTER_ATTEMPT="+strconv.Itoa(req.Attempt))
	}
	for k, v := range req.Env {
		env = append(env, k+"="+v)
	}
	// macOS: the engine's mark, by which it finds a daemon the run leaves
	// (none on Linux, where the engine is a subreaper).
	return append(env, proc.OwnerEnv()...)
}

// The buffers of a run's output, kept for the next run (a loop runs agents
// back to back; a fresh 350 KB each run was most of what an iteration of
// the engine allocated).
var (
	transcriptWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}
	lineReaders       = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
	stderrBufs        = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
)

// Run starts the agent, streams its output, enforces the timeouts and returns
// the normalized result. It never returns before the agent's process group has
// been signalled to stop. onTool, if not nil, is called for each tool call as
// it shows up in the stream.
func Run(ctx context.Context, req Request, ad Adapter, onTool func(ToolEvent)) Result {
	start := time.Now()
	parser := ad.NewParser(req)
	var signal string // set once the process was waited for
	finish := func(exit Exit, out int64) Result {
		res := parser.Finish(exit)
		res.Duration = time.Since(start)
		res.Ended = start.Add(res.Duration).UTC()
		res.Signal = signal
		res.OutputBytes = out
		res.Transcript = req.Transcript
		if res.Status == "" {
			res.Status = StatusFailed
		}
		return res
	}

	inv, err := ad.Invocation(req)
	if err != nil {
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}
	var box *sandbox.BoxedRun
	if req.Wrap != nil {
		path, args, env, err := req.Wrap(inv.Path, inv.Args)
		if err != nil {
			return finish(Exit{Code: -1, StartErr: fmt.Errorf("sandbox: %w", err)}, 0)
		}
		if box = sandbox.TakeBoxedRun(path); box != nil {
			// The loop's run box starts it; cmd is the classic start, for
			// where the box cannot.
			path, _ = box.Classic()
		}
		inv.Path, inv.Args, inv.Env = path, args, append(inv.Env, env...)
	}
	if err := os.MkdirAll(filepath.Dir(req.Transcript), 0o700); err != nil {
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}
	// O_EXCL: a transcript is never overwritten.
	transcript, err := os.OpenFile(req.Transcript, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return finish(Exit{Code: -1, StartErr: fmt.Errorf("open transcript: %w", err)}, 0)
	}
	defer transcript.Close()

	outR, outW, err := os.Pipe()
	if err != nil {
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}

	cmd := exec.Command(inv.Path, inv.Args...)
	cmd.Dir = req.Dir
	cmd.Env = inv.Env
	stdin, err := stdinFor(inv.Stdin)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}
	if f, ok := stdin.(*os.File); ok {
		defer f.Close()
	}
	cmd.Stdin = stdin
	cmd.Stdout = outW
	cmd.Stderr = errW
	// A session of its own: the agent has no controlling terminal (it
	// cannot push keystrokes into the user's with TIOCSTI), and its process
	// group, which the engine ends, is the session's.
	cmd.SysProcAttr = proc.SessionAttr()
	proc.IntoCgroup(cmd.SysProcAttr, req.CgroupFD)
	proc.DieWithParent(cmd.SysProcAttr)
	// The stdin copy goroutine must not outlive the process by much.
	cmd.WaitDelay = pipeDrain
	keepOnlyStdio()
	boxed, err := startCmd(cmd, box, req.CgroupFD)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return finish(Exit{Code: -1, StartErr: err}, 0)
	}
	outW.Close()
	errW.Close()
	pgid := boxed.pid(cmd)
	if req.OnStart != nil {
		req.OnStart(pgid)
	}

	var lastOutput atomic.Int64
	lastOutput.Store(time.Now().UnixNano())
	var outBytes atomic.Int64
	// A run whose output tells what it spent (a spendMeter: the backend's
	// MetersCost) is stopped once that passes its cost cap.
	meter, _ := parser.(spendMeter)
	if req.MaxBudgetUSD <= 0 {
		meter = nil
	}
	overCap := make(chan struct{})
	var spent float64

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tw := transcriptWriters.Get().(*bufio.Writer)
		tw.Reset(transcript)
		defer func() {
			tw.Flush()
			tw.Reset(nil)
			transcriptWriters.Put(tw)
		}()
		rw := req.Redact.Writer(tw) // secrets never reach the disk
		defer rw.Close()
		streamLines(outR, func(chunk []byte, more bool) {
			lastOutput.Store(time.Now().UnixNano())
			n := outBytes.Add(int64(len(chunk)))
			if n-int64(len(chunk)) >= MaxTranscript {
				return
			}
			if n > MaxTranscript {
				chunk = chunk[:int64(len(chunk))-(n-MaxTranscript)]
			}
			rw.Write(chunk)
			if n >= MaxTranscript {
				rw.Close()
				fmt.Fprintf(tw, "\n[looprinter: transcript cut at %d bytes; the rest of the output was read but not stored]\n", int64(MaxTranscript))
				tw.Flush()
				return
			}
			if !more {
				rw.Flush() // nothing else is waiting: let readers of the transcript see it now
				tw.Flush()
			}
		}, func(line []byte) {
			for _, ev := range parser.Line(line) {
				if onTool != nil {
					onTool(ev)
				}
			}
			if meter != nil && meter.Spent() > req.MaxBudgetUSD {
				spent, meter = meter.Spent(), nil
				close(overCap)
			}
		})
	}()
	var errTail tailBuffer
	errTail.max = stderrTail
	go func() {
		defer wg.Done()
		var errFile *os.File
		var errOut *redact.Writer
		bp := stderrBufs.Get().(*[]byte)
		defer stderrBufs.Put(bp)
		buf := *bp
		for {
			n, err := errR.Read(buf)
			if n > 0 {
				lastOutput.Store(time.Now().UnixNano())
				errTail.Write(buf[:n])
				if errFile == nil {
					errFile, _ = os.OpenFile(req.Transcript+".stderr", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
					if errFile != nil {
						errOut = req.Redact.Writer(errFile)
					}
				}
				if errOut != nil {
					errOut.Write(buf[:n])
					errOut.Flush()
				}
			}
			if err != nil {
				break
			}
		}
		if errFile != nil {
			errOut.Close()
			errFile.Close()
		}
	}()

	waitErr := make(chan error, 1)
	go func() { waitErr <- boxed.wait(cmd) }()
	kill := boxed.killer(pgid)

	var killed Status
	var deadline <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(idleTick(req.IdleTimeout))
	defer tick.Stop()
	var werr error
loop:
	for {
		select {
		case werr = <-waitErr:
			break loop
		case <-ctx.Done():
			killed = StatusInterrupted
			werr = stopGroup(kill, req.Grace, waitErr)
			break loop
		case <-deadline:
			killed = StatusTimeout
			werr = stopGroup(kill, req.Grace, waitErr)
			break loop
		case <-overCap:
			killed = StatusCapped
			werr = stopGroup(kill, req.Grace, waitErr)
			break loop
		case <-tick.C:
			if req.IdleTimeout > 0 && time.Since(time.Unix(0, lastOutput.Load())) >= req.IdleTimeout {
				killed = StatusIdle
				werr = stopGroup(kill, req.Grace, waitErr)
				break loop
			}
		}
	}
	// The leader is gone; nothing it started may outlive the run.
	killGroup(kill)

	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(pipeDrain):
		// A process outside the group still holds a pipe: cut it loose.
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()

	var code int
	code, signal = boxed.exit(werr, cmd)
	res := finish(Exit{Code: code, Killed: killed, StderrTail: errTail.String()}, outBytes.Load())
	if killed == StatusCapped {
		// Read once the output is drained: spent was set before overCap
		// was closed.
		res.Error = fmt.Sprintf("stopped at its cost cap: the run reported $%.4f spent, past its cap of $%.4f (agent.max_budget_usd, or its share of what the loop's cost budget left)", spent, req.MaxBudgetUSD)
	}
	return res
}

// A spendMeter is a parser that knows what its run has spent so far, as
// the run's output says it (Backend.MetersCost).
type spendMeter interface {
	Spent() float64
}

// ParseTranscript reads back a transcript the way Run reads the live output,
// for a run whose engine died before it could: what the agent reported (its
// cost above all) is still counted. The run counts as killed.
func ParseTranscript(req Request, ad Adapter) Result {
	parser := ad.NewParser(req)
	if f, err := os.Open(req.Transcript); err == nil {
		streamLines(f, func([]byte, bool) {}, func(line []byte) { parser.Line(line) })
		f.Close()
	}
	res := parser.Finish(Exit{Code: -1, Killed: StatusInterrupted})
	res.Transcript = req.Transcript
	if res.Status == "" {
		res.Status = StatusInterrupted
	}
	return res
}

func idleTick(idle time.Duration) time.Duration {
	if idle <= 0 || idle > 4*time.Second {
		return time.Second
	}
	t := idle / 4
	if t < 10*time.Millisecond {
		t = 10 * time.Millisecond
	}
	return t
}

// stopGroup asks the group to stop, waits up to grace, then kills it.
func stopGroup(kill func(syscall.Signal) error, grace time.Duration, waitErr <-chan error) error {
	if grace <= 0 {
		grace = 5 * time.Second
	}
	kill(syscall.SIGTERM)
	select {
	case err := <-waitErr:
		return err
	case <-time.After(grace):
	}
	kill(syscall.SIGKILL)
	select {
	case err := <-waitErr:
		return err
	case <-time.After(pipeDrain + time.Second):
		return errors.New("agent did not exit after SIGKILL")
	}
}

// killGroup kills whatever is left in the group (grandchildren).
func killGroup(kill func(syscall.Signal) error) {
	if err := kill(syscall.SIGTERM); err != nil {
		return // no one left
	}
	for i := 0; i < 20; i++ {
		time.Sleep(10 * time.Millisecond)
		if kill(0) != nil {
			return
		}
	}
	kill(syscall.SIGKILL)
}

func exitCode(err error, cmd *exec.Cmd) int {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return cmd.ProcessState.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// signalOf names the signal that ended cmd's process, "" when it exited.
func signalOf(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return ""
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return SignalName(ws.Signal())
}

// SignalName is the usual name of a signal: "SIGKILL", "SIGTERM" … (its
// number for the others).
func SignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// streamLines copies r to sink in chunks, and hands complete lines (cut at
// MaxLine) to onLine. Memory stays bounded whatever the agent prints. sink's
// more says whether further input is already buffered.
func streamLines(r io.Reader, sink func(chunk []byte, more bool), onLine func([]byte)) {
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		lineReaders.Put(br)
	}()
	var line []byte
	overflow := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			sink(chunk, br.Buffered() > 0)
			complete := chunk[len(chunk)-1] == '\n'
			body := chunk
			if complete {
				body = chunk[:len(chunk)-1]
			}
			if !overflow {
				room := MaxLine - len(line)
				if len(body) > room {
					body = body[:room]
					overflow = true
				}
				line = append(line, body...)
			}
			if complete {
				onLine(trimCR(line))
				line = line[:0]
				if cap(line) > 256<<10 {
					line = nil // give back memory from a long line
				}
				overflow = false
			}
		}
		if err != nil {
			if err == bufio.ErrBufferFull {
				continue
			}
			if len(line) > 0 {
				onLine(trimCR(line))
			}
			return
		}
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
