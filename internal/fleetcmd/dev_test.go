package fleetcmd

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// notifyWriter is a buffer that says when something was written.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startWorker starts a stand-in for the worker: sh running script.
func startWorker(t *testing.T, script string) DevWorker {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return DevWorker{Identity: "dev-1", Pid: cmd.Process.Pid, Wait: cmd.Wait}
}

// A worker that fails ends fleet dev with an error that names it and says
// how it ended; the command exits non-zero.
func TestDevWorkerFailureIsReported(t *testing.T) {
	for _, c := range []struct {
		name string
		w    func(t *testing.T) DevWorker
		want string
	}{
		{"injected", func(*testing.T) DevWorker {
			return DevWorker{Identity: "dev-1", Pid: 42, Wait: func() error { return errors.New("no route to the frontend") }}
		}, "the worker dev-1 (pid 42) failed: no route to the frontend"},
		{"exit 4", func(t *testing.T) DevWorker { return startWorker(t, "exit 4") }, "the worker dev-1 (pid %d) failed: exit status 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			w := c.w(t)
			err := SuperviseDevWorker(context.Background(), &IO{Out: &out, Err: &errb}, w)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code == 0 {
				t.Fatalf("want a non-zero exit, got %v", err)
			}
			want := c.want
			if strings.Contains(want, "%d") {
				want = strings.Replace(want, "%d", strconv.Itoa(w.Pid), 1)
			}
			if msg := ee.Err.Error(); !strings.HasPrefix(msg, "fleet dev: "+want) || !strings.Contains(msg, "the server stops") {
				t.Errorf("message %q, want it to start with %q", msg, "fleet dev: "+want)
			}
		})
	}
}

// A worker stopped on purpose (killed by a signal, the documented way to
// see a step move to another worker; or asked to stop, when it exits 0) is
// reported, and fleet dev keeps serving until it is stopped itself.
func TestDevWorkerStoppedIsReportedServerStays(t *testing.T) {
	for _, c := range []struct{ script, how string }{
		{"kill -9 $$", "signal: killed"},
		{"exit 0", "exit status 0"},
	} {
		t.Run(c.how, func(t *testing.T) {
			w := startWorker(t, c.script)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errw := &notifyWriter{wrote: make(chan struct{}, 1)}
			done := make(chan error, 1)
			go func() { done <- SuperviseDevWorker(ctx, &IO{Out: &bytes.Buffer{}, Err: errw}, w) }()
			select {
			case <-errw.wrote:
			case err := <-done:
				t.Fatalf("fleet dev ended when its worker stopped: %v (stderr %q)", err, errw.String())
			}
			want := "fleet dev: the worker dev-1 (pid " + strconv.Itoa(w.Pid) + ") was stopped (" + c.how + "); the server keeps running"
			if !strings.Contains(errw.String(), want) {
				t.Errorf("stderr %q, want %q", errw.String(), want)
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("stopped by the user: %v", err)
			}
		})
	}
}

// Stopping fleet dev while the worker runs is no error.
func TestDevWorkerStoppedByUser(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errb bytes.Buffer
	err := SuperviseDevWorker(ctx, &IO{Out: &bytes.Buffer{}, Err: &errb}, DevWorker{Identity: "dev-1", Pid: 1, Wait: func() error { <-block; return nil }})
	if err != nil || errb.Len() != 0 {
		t.Errorf("err %v, stderr %q", err, errb.String())
	}
}
