package fleetdev

// Fleet loops through the ordinary commands (status, list, logs, cost,
// pause, resume, stop, schedule) of the looprinter built with -tags fleet,
// against the embedded server, with the search attributes registered.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/looprinter/looprinter/fleet"
	"github.com/looprinter/looprinter/internal/fleettest"
	"github.com/looprinter/looprinter/loop"
)

// controlEnv is newEnv with looprinter's search attributes registered.
func controlEnv(t *testing.T) *env {
	e := newEnv(t)
	if err := RegisterSearchAttributes(e.c, e.ts.GetDefaultNamespace()); err != nil {
		t.Fatal(err)
	}
	return e
}

// run runs the fleet build of looprinter in dir, configured for the
// server through the environment as a user would, with its own state
// folder. It returns stdout, stderr and the exit code.
func (e *env) run(dir, state string, args ...string) (string, string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "looprinter"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOOPRINTER_TEMPORAL="+e.ts.GetFrontendHostPort(), "LOOPRINTER_NAMESPACE="+e.ts.GetDefaultNamespace(),
		"LOOPRINTER_STATE_DIR="+state)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("looprinter %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// must runs looprinter and fails the test unless it exits 0.
func (e *env) must(dir, state string, args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(dir, state, args...)
	if code != 0 {
		e.t.Fatalf("looprinter %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
	}
	return out + errs
}

// listed is one entry of `looprinter list --json` as the test reads it.
type listed struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Fleet     bool   `json:"fleet"`
	From      string `json:"from"`
	Steps     int    `json:"steps"`
	LoopState *struct {
		Phase         string `json:"phase"`
		CycleGate     string `json:"cycle_gate"`
		ObjectiveGate string `json:"objective_gate"`
		Outcome       string `json:"outcome"`
	} `json:"loop_state"`
}

func (e *env) list(state string) []listed {
	e.t.Helper()
	out := e.must(state, state, "list", "--json")
	var ls []listed
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "]")+1]), &ls); err != nil {
		e.t.Fatalf("list --json: %v\n%s", err, out)
	}
	return ls
}

// eventually retries f for up to d.
func eventually(t *testing.T, d time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := f()
		if ok {
			return
		}
		last = s
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s; last:\n%s", what, d, last)
}

// submitCLI submits a loop with `looprinter submit` from its repository,
// whose origin is the bare remote.
func (e *env) submitCLI(name string, p fleettest.Project, state string) (src, remote string) {
	e.t.Helper()
	src, remote = fleettest.Repo(e.t, p)
	fleettest.Git(e.t, src, "remote", "add", "origin", remote)
	out := e.must(src, state, "submit", "--heartbeat-timeout", "10s")
	if strings.Contains(out, "no looprinter search attributes") {
		e.t.Fatalf("submit did not find the registered search attributes:\n%s", out)
	}
	return src, remote
}

// status, list, logs, cost, pause, resume and stop of a fleet loop through
// the ordinary commands; list reads the search attributes (no worker asked).
func TestOrdinaryCommandsOnFleetLoops(t *testing.T) {
	e := controlEnv(t)
	e.worker("w1")
	state := t.TempDir()
	e.submitCLI("ctl", fleettest.SlowBuild("ctl"), state)

	e.must(state, state, "pause", "ctl")
	eventually(t, 90*time.Second, "status shows the loop paused", func() (bool, string) {
		out, _, _ := e.run(state, state, "status", "ctl")
		return strings.Contains(out, "state:      paused (on the fleet: workflow looprinter-ctl)") && strings.Contains(out, "gates:      cycle "), out
	})
	// list: the paused loop with both gates, from visibility.
	eventually(t, 60*time.Second, "list shows the paused loop from its search attributes", func() (bool, string) {
		for _, l := range e.list(state) {
			if l.Name == "ctl" && l.Fleet && l.State == "paused" && l.From == "search attributes" && l.LoopState != nil && l.LoopState.CycleGate != "" && l.LoopState.ObjectiveGate != "" {
				return true, ""
			}
		}
		out, _, _ := e.run(state, state, "list", "--json")
		return false, out
	})
	out := e.must(state, state, "list")
	if !strings.Contains(out, "ctl") || !strings.Contains(out, "paused") || !strings.Contains(out, "gates ") || !strings.Contains(out, "fleet: looprinter-ctl") {
		t.Fatalf("list:\n%s", out)
	}
	if out := e.must(state, state, "status"); !strings.Contains(out, "fleet paused") {
		t.Fatalf("status of every loop:\n%s", out)
	}
	// Paused: the step under way finishes (however long it takes on a
	// loaded machine), and no other starts.
	e.noStep("ctl")
	s1, _ := fleet.LoopStatus(context.Background(), e.c, "ctl")
	time.Sleep(3 * time.Second)
	if s2, _ := fleet.LoopStatus(context.Background(), e.c, "ctl"); s2.Steps != s1.Steps || e.pending("ctl") != nil {
		t.Fatalf("steps ran while paused: %d, then %d", s1.Steps, s2.Steps)
	}
	e.must(state, state, "resume", "ctl")
	if r := e.wait("ctl", 3*time.Minute); r.Outcome.Reason != loop.ReasonDone {
		t.Fatalf("after resume: %+v", r.Outcome)
	}
	e.history("ctl", "search-attributes.json") // upserts behind GetVersion, a pause: for the replay test
	out = e.must(state, state, "status", "ctl")
	if !strings.Contains(out, "state:      finished") || !strings.Contains(out, "outcome:    DONE (exit 0)") || !strings.Contains(out, "branch:     main on ") {
		t.Fatalf("status after the end:\n%s", out)
	}
	if out := e.must(state, state, "logs", "ctl"); !strings.Contains(out, "loop_stop") && !strings.Contains(strings.ToLower(out), "done") {
		t.Fatalf("logs:\n%s", out)
	}
	if out := e.must(state, state, "logs", "--json", "ctl"); !strings.Contains(out, `"event":"loop_stop"`) || !strings.Contains(out, `"event":"verify"`) {
		t.Fatalf("logs --json has no loop_stop or verify record:\n%s", out)
	}
	if out := e.must(state, state, "cost", "ctl"); !strings.Contains(out, "as the workflow counts it") || !strings.Contains(out, "cost per passed task") {
		t.Fatalf("cost:\n%s", out)
	}
	if out := e.must(state, state, "watch", "--once", "ctl"); !strings.Contains(out, "ctl") || !strings.Contains(out, "fleet: looprinter-ctl") {
		t.Fatalf("watch --once:\n%s", out)
	}
	// An ended loop: stop says so; pause refuses.
	if out := e.must(state, state, "stop", "ctl"); !strings.Contains(out, "is not running") {
		t.Fatalf("stop of an ended loop:\n%s", out)
	}
	if _, errs, code := e.run(state, state, "pause", "ctl"); code == 0 || !strings.Contains(errs, "has ended") {
		t.Fatalf("pause of an ended loop: exit %d, %s", code, errs)
	}
	// answer and guide say they do not reach fleet loops.
	if _, errs, code := e.run(state, state, "guide", "ctl", "be careful"); code == 0 || !strings.Contains(errs, "does not reach fleet loops") {
		t.Fatalf("guide: exit %d, %s", code, errs)
	}
	// An unknown name is still the ordinary error.
	if _, errs, code := e.run(state, state, "status", "nosuch"); code == 0 || strings.Contains(errs, "fleet") {
		t.Fatalf("status of an unknown loop: exit %d, %s", code, errs)
	}

	// stop through the ordinary command.
	e.submitCLI("ctl-stop", fleettest.SlowBuild("ctl-stop"), state)
	e.must(state, state, "stop", "ctl-stop")
	r := e.wait("ctl-stop", 2*time.Minute)
	if r.Outcome.Reason != fleet.ReasonStopped || r.Outcome.ExitCode != 130 {
		t.Fatalf("stop: %+v", r.Outcome)
	}
	if out := e.must(state, state, "status", "ctl-stop"); !strings.Contains(out, "state:      interrupted") {
		t.Fatalf("status after stop:\n%s", out)
	}
}

// A Temporal Schedule for a fleet loop: a firing while the loop runs is
// skipped, never a second run at once.
func TestFleetScheduleRefusesOverlap(t *testing.T) {
	e := controlEnv(t)
	e.worker("w1")
	state := t.TempDir()
	p := fleettest.SlowBuild("sched")
	src, remote := fleettest.Repo(t, p)
	fleettest.Git(t, src, "remote", "add", "origin", remote)
	if out := e.must(src, state, "schedule", "--fleet", "--every", "2s"); !strings.Contains(out, "scheduled sched on the fleet") {
		t.Fatalf("schedule:\n%s", out)
	}
	if _, errs, code := e.run(src, state, "schedule", "--fleet", "--every", "2s"); code == 0 || !strings.Contains(errs, "has a schedule already") {
		t.Fatalf("a second schedule: exit %d, %s", code, errs)
	}
	ctx := context.Background()
	var info *fleet.ScheduleInfo
	eventually(t, 2*time.Minute, "a firing is skipped while the first run runs", func() (bool, string) {
		var err error
		info, err = fleet.DescribeSchedule(ctx, e.c, "sched")
		if err != nil {
			return false, err.Error()
		}
		return info.Skipped >= 2 && len(info.Running) == 1, func() string { b, _ := json.Marshal(info); return string(b) }()
	})
	if info.Actions != 1 {
		t.Fatalf("%d runs started while the first one runs: %+v", info.Actions, info)
	}
	// submit refuses while the schedule's run runs.
	if _, errs, code := e.run(src, state, "submit"); code == 0 || !strings.Contains(errs, "already running, started by its schedule") {
		t.Fatalf("submit while the scheduled run runs: exit %d, %s", code, errs)
	}
	// status and list find the scheduled run (its workflow id has the firing's time).
	if out := e.must(state, state, "status", "sched"); !strings.Contains(out, "workflow "+info.Running[0]) {
		t.Fatalf("status of the scheduled loop:\n%s", out)
	}
	if out := e.must(state, state, "schedule", "--fleet", "--list"); !strings.Contains(out, "sched  every 2s") || !strings.Contains(out, "firings skipped") {
		t.Fatalf("schedule --list:\n%s", out)
	}
	e.must(state, state, "schedule", "--fleet", "--remove", "sched")
	if out := e.must(state, state, "schedule", "--fleet", "--list"); strings.Contains(out, "sched  every") || !strings.Contains(out, "no fleet schedules") {
		t.Fatalf("removed, still listed:\n%s", out)
	}
	e.must(state, state, "stop", "sched")
	var r fleet.Result
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := e.c.GetWorkflow(cctx, info.Running[0], "").Get(cctx, &r); err != nil || r.Outcome.Reason != fleet.ReasonStopped {
		t.Fatalf("the scheduled run after stop: %+v %v", r.Outcome, err)
	}
}

// A workflow that claims DONE in its query answer, its search attributes
// and its result's status, while its outcome says otherwise (or nothing
// yet): status and list never say DONE.
func TestHostileWorkflowCannotClaimDone(t *testing.T) {
	e := controlEnv(t)
	state := t.TempDir()
	liar := func(ctx workflow.Context, in fleet.LoopInput) (*fleet.Result, error) {
		claim := fleet.Status{Loop: in.Name, Phase: loop.PhaseDone, Cycle: 9, CycleGate: "pass", ObjectiveGate: "pass", Outcome: loop.ReasonDone, Steps: 9,
			Summary: "\x1b[2Jboth gates passed"}
		if err := workflow.SetQueryHandler(ctx, fleet.QueryStatus, func() (fleet.Status, error) { return claim, nil }); err != nil {
			return nil, err
		}
		err := workflow.UpsertTypedSearchAttributes(ctx, temporal.NewSearchAttributeKeyKeyword(fleet.SAOutcome).ValueSet(loop.ReasonDone),
			temporal.NewSearchAttributeKeyKeyword(fleet.SAPhase).ValueSet(loop.PhaseDone), temporal.NewSearchAttributeKeyInt64(fleet.SASteps).ValueSet(9))
		if err != nil {
			return nil, err
		}
		var how string
		workflow.GetSignalChannel(ctx, "finish").Receive(ctx, &how)
		out := fleet.Outcome{Reason: loop.ReasonBlocked, ExitCode: 0, Summary: "the agent could not run"}
		if how == "unknown" {
			out.Reason = "done\x1b[2J"
		}
		return &fleet.Result{Outcome: out, Status: claim}, nil
	}
	w := worker.New(e.c, "hostile", worker.Options{})
	w.RegisterWorkflowWithOptions(liar, workflow.RegisterOptions{Name: fleet.WorkflowName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	for _, name := range []string{"evil", "evil-unknown"} {
		o := client.StartWorkflowOptions{ID: fleet.WorkflowID(name), TaskQueue: "hostile", Memo: map[string]any{"looprinter-loop": name}}
		if _, err := e.c.ExecuteWorkflow(ctx, o, fleet.WorkflowName, fleet.LoopInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	// Running: the query and the search attributes say DONE; status and list do not.
	eventually(t, time.Minute, "list reads the liar's search attributes", func() (bool, string) {
		for _, l := range e.list(state) {
			if l.Name == "evil" && l.From == "search attributes" {
				return true, ""
			}
		}
		return false, ""
	})
	for _, args := range [][]string{{"status", "evil"}, {"list"}, {"status"}, {"status", "--json", "evil"}, {"list", "--json"}} {
		out := e.must(state, state, args...)
		if strings.Contains(out, "DONE") || strings.Contains(out, `"outcome": "done"`) || strings.Contains(out, "\x1b") {
			t.Fatalf("looprinter %v of a running loop claims DONE (or prints an escape):\n%s", args, out)
		}
	}
	if out := e.must(state, state, "status", "evil"); !strings.Contains(out, "state:      running") {
		t.Fatalf("status:\n%s", out)
	}
	// Ended: the result's outcome says BLOCKED; its status says DONE.
	e.c.SignalWorkflow(ctx, fleet.WorkflowID("evil"), "", "finish", "blocked")
	e.c.SignalWorkflow(ctx, fleet.WorkflowID("evil-unknown"), "", "finish", "unknown")
	for _, name := range []string{"evil", "evil-unknown"} {
		eventually(t, time.Minute, name+" ends BLOCKED", func() (bool, string) {
			out, _, _ := e.run(state, state, "status", name)
			return strings.Contains(out, "outcome:    BLOCKED (exit 4)"), out
		})
		for _, args := range [][]string{{"status", name}, {"list"}, {"status", "--json", name}} {
			out := e.must(state, state, args...)
			if strings.Contains(out, "DONE") || strings.Contains(out, `"outcome": "done"`) || strings.Contains(out, "\x1b") {
				t.Fatalf("looprinter %v of a BLOCKED loop claims DONE:\n%s", args, out)
			}
		}
	}
}
