package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
)

// fakeRemote is a fleet with one loop, "far".
type fakeRemote struct {
	st    RemoteStatus
	calls []string
}

func (f *fakeRemote) Where() string { return "fake" }
func (f *fakeRemote) Find(_ context.Context, name string) (*RemoteStatus, error) {
	if name != f.st.Name {
		return nil, fmt.Errorf("%w: %s", ErrNoRemoteLoop, name)
	}
	s := f.st
	return &s, nil
}
func (f *fakeRemote) List(context.Context) ([]RemoteStatus, error) { return []RemoteStatus{f.st}, nil }
func (f *fakeRemote) Control(_ context.Context, name, action string) error {
	f.calls = append(f.calls, action+" "+name)
	return nil
}
func (f *fakeRemote) Records(context.Context, string) (string, error) { return "", fmt.Errorf("no") }
func (f *fakeRemote) Schedule(context.Context, RemoteScheduleRequest) (string, error) {
	return "", nil
}
func (f *fakeRemote) Schedules(context.Context) ([]RemoteSchedule, error) { return nil, nil }
func (f *fakeRemote) Unschedule(context.Context, string) error            { return nil }
func (f *fakeRemote) Close()                                              {}

func withRemote(t *testing.T, f *fakeRemote) {
	old := Remote
	Remote = func() (RemoteLoops, error) { return f, nil }
	t.Cleanup(func() { Remote = old })
}

func runCLI(t *testing.T, args ...string) (string, error) {
	var out bytes.Buffer
	root := NewRoot(&IO{In: strings.NewReader(""), Out: &out, Err: &out})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// A name no local loop has reaches the fleet: status, list, pause, resume
// and stop; an unknown name stays the local error.
func TestOrdinaryCommandsReachRemoteLoops(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	t.Chdir(t.TempDir())
	st := &loop.State{Loop: "far", Phase: "build", Cycle: 2, CycleGate: "pass", ObjectiveGate: "fail", CostUSD: 1.5, StartedAt: time.Now()}
	f := &fakeRemote{st: RemoteStatus{Status: ops.Status{Entry: ops.Entry{Key: "fleet:far", Name: "far"}, State: ops.StatePaused, Loop: st, Line: "[Cycle 2] \x1b[31mred"},
		Fleet: true, Workflow: "looprinter-far", Branch: "main", Remote: "/r.git", Steps: 5}}
	withRemote(t, f)

	out, err := runCLI(t, "status", "far")
	if err != nil || !strings.Contains(out, "state:      paused (on the fleet: workflow looprinter-far)") || !strings.Contains(out, "gates:      cycle pass, objective fail") {
		t.Fatalf("status far: %v\n%s", err, out)
	}
	if strings.Contains(out, "\x1b") {
		t.Fatalf("status prints an escape sequence from the fleet:\n%q", out)
	}
	out, err = runCLI(t, "list")
	if err != nil || !strings.Contains(out, "far") || !strings.Contains(out, "gates pass/fail") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = runCLI(t, "status")
	if err != nil || !strings.Contains(out, "fleet paused") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, a := range []string{"pause", "resume", "stop"} {
		if out, err := runCLI(t, a, "far"); err != nil {
			t.Fatalf("%s far: %v\n%s", a, err, out)
		}
	}
	if strings.Join(f.calls, ",") != "pause far,resume far,stop far" {
		t.Fatalf("signals sent: %v", f.calls)
	}
	if _, err := runCLI(t, "guide", "far", "text"); err == nil || !strings.Contains(err.Error(), "does not reach fleet loops") {
		t.Fatalf("guide far: %v", err)
	}
	if _, err := runCLI(t, "status", "near"); err == nil || strings.Contains(err.Error(), "fleet") {
		t.Fatalf("status of an unknown loop: %v", err)
	}
	// An ended fleet loop: stop says it is not running and sends nothing.
	code := 0
	f.st.State, f.st.Loop.Outcome, f.st.ExitCode = ops.StateFinished, loop.ReasonDone, &code
	f.calls = nil
	if out, err := runCLI(t, "stop", "far"); err != nil || !strings.Contains(out, "is not running") || len(f.calls) != 0 {
		t.Fatalf("stop of an ended loop: %v %v\n%s", err, f.calls, out)
	}
}
