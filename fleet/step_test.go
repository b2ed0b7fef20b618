package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// The demo's cycle loop with a scripted agent that also reports spend.
const cycleLoop = `version: 1
name: demo
shape: cycle
objective: "hello.txt says hello and world.txt says world"
agent:
  backend: command
  command: "looprinter fake-agent --script agent.txt"
  timeout: 1m
budget:
  iterations: 10
  cycles: 4
  wall: 5m
verify:
  - grep -q hello hello.txt
  - grep -q world world.txt
objective_verify:
  - sh objective.sh
`

const cycleScript = `== plan
plan T-001:hello.txt
cost 0.10
== build
do hello
cost 0.20
== build
do world
cost 0.20
== replan
plan T-001:world.txt
cost 0.10
`

const objective = `test "$(cat hello.txt)" = hello && test "$(cat world.txt)" = world
`

// project writes the demo project into a new git repository and returns its
// folder and a bare clone of it, the fleet's remote.
func project(t *testing.T) (src, remote string) {
	t.Helper()
	root := t.TempDir()
	src = filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	for name, text := range map[string]string{"loop.yaml": cycleLoop, "agent.txt": cycleScript, "objective.sh": objective} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, src, "init", "-q", "-b", "main")
	gitT(t, src, "add", "-A")
	gitT(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
	remote = filepath.Join(root, "remote.git")
	gitT(t, root, "clone", "-q", "--bare", src, remote)
	return src, remote
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runLocal runs the loop with the local engine in a copy of src.
func runLocal(t *testing.T, src string) (*loop.Outcome, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("cp", "-a", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	l, err := spec.Load(filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := loop.Run(context.Background(), l, loop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return o, events(t, filepath.Join(dir, "working-records"))
}

// events is the shape of a loop's records: each event with its phase, task
// and verdict, in order, without times, paths, or warnings.
func events(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		evs, err := record.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Event == record.Warning {
				continue
			}
			pass := ""
			if e.Pass != nil {
				pass = fmt.Sprint(*e.Pass)
			}
			out = append(out, strings.Join([]string{e.Event, e.Phase, e.Task, pass, e.Reason}, "|"))
		}
	}
	return out
}

type fleetRun struct {
	t       *testing.T
	env     *testsuite.TestActivityEnvironment
	workers []*Worker
	in      StepInput
	out     *StepOutput
	steps   int
}

func newFleetRun(t *testing.T, remote string, nWorkers int) *fleetRun {
	var suite testsuite.WorkflowTestSuite
	f := &fleetRun{t: t, env: suite.NewTestActivityEnvironment()}
	for i := range nWorkers {
		f.workers = append(f.workers, &Worker{Dir: filepath.Join(t.TempDir(), fmt.Sprintf("w%d", i+1)), Identity: fmt.Sprintf("w%d", i+1), Queue: fmt.Sprintf("q@w%d", i+1)})
	}
	f.in = StepInput{WorkflowID: "demo", Seq: 1, Name: "demo", LoopFile: "loop.yaml", Spec: []byte(cycleLoop), Remote: remote, Branch: "main"}
	return f
}

// step runs the next step on worker i, as the workflow would: the output's
// commit and private files go into the next input.
func (f *fleetRun) step(i int) error {
	f.t.Helper()
	f.env.RegisterActivity(f.workers[i])
	v, err := f.env.ExecuteActivity(f.workers[i].Step, f.in)
	if err != nil {
		return err
	}
	var out StepOutput
	if err := v.Get(&out); err != nil {
		f.t.Fatal(err)
	}
	f.out = &out
	f.steps++
	f.in.Seq++
	f.in.Commit, f.in.Private, f.in.Spent, f.in.Notes = out.Commit, out.Private, nil, nil
	return nil
}

// untilDone runs steps, worker after worker, until the loop stops.
func (f *fleetRun) untilDone() {
	f.t.Helper()
	for i := 0; f.out == nil || f.out.Outcome == nil; i++ {
		if i > 40 {
			f.t.Fatal("the loop did not stop in 40 steps")
		}
		if err := f.step(i % len(f.workers)); err != nil {
			f.t.Fatalf("step %d: %v", f.in.Seq, err)
		}
	}
}

func finalState(t *testing.T, out *StepOutput) *loop.State {
	var st loop.State
	if err := json.Unmarshal(out.Private["state.json"], &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// clone checks the branch out into a new folder.
func clone(t *testing.T, remote string) string {
	dir := filepath.Join(t.TempDir(), "check")
	gitT(t, filepath.Dir(dir), "clone", "-q", "-b", "main", remote, dir)
	return dir
}

// Steps that move between workers through the remote end as the same loop
// run locally ends: same outcome, counters and records.
func TestStepsAcrossWorkersMatchALocalRun(t *testing.T) {
	src, remote := project(t)
	local, localEvents := runLocal(t, src)
	if local.Reason != loop.ReasonDone {
		t.Fatalf("the local run: %s %s", local.Reason, local.Summary)
	}
	f := newFleetRun(t, remote, 3)
	f.untilDone()
	if f.out.Outcome.Reason != local.Reason || f.out.Outcome.ExitCode != local.ExitCode {
		t.Fatalf("fleet %+v, local %s", f.out.Outcome, local.Reason)
	}
	st, ls := finalState(t, f.out), local.State
	if st.Iterations != ls.Iterations || st.AgentRuns != ls.AgentRuns || st.TasksPassed != ls.TasksPassed || st.Cycle != ls.Cycle || st.CostUSD != ls.CostUSD {
		t.Fatalf("counters differ: fleet %d/%d/%d/%d/$%.2f, local %d/%d/%d/%d/$%.2f", st.Iterations, st.AgentRuns, st.TasksPassed, st.Cycle, st.CostUSD,
			ls.Iterations, ls.AgentRuns, ls.TasksPassed, ls.Cycle, ls.CostUSD)
	}
	dir := clone(t, remote)
	if got := events(t, filepath.Join(dir, "working-records")); !reflect.DeepEqual(got, localEvents) {
		t.Fatalf("records differ:\nfleet %q\nlocal %q", got, localEvents)
	}
	for _, name := range []string{"hello.txt", "world.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("the branch lacks the work: %v", err)
		}
	}
	log := gitT(t, dir, "log", "--format=%s")
	if n := strings.Count(log, "looprinter: demo step"); n != f.steps {
		t.Fatalf("%d step commits for %d steps:\n%s", n, f.steps, log)
	}
}

// A worker that died in a build run: the step runs again elsewhere from the
// last pushed commit; the dead run is counted (iteration, agent run, cost)
// and recorded, and nothing it did is credited.
func TestDeadRunCountedNeverCredited(t *testing.T) {
	src, remote := project(t)
	local, _ := runLocal(t, src)
	f := newFleetRun(t, remote, 2)
	for f.out == nil || f.out.Status.Phase != loop.PhaseBuild {
		if err := f.step(0); err != nil {
			t.Fatal(err)
		}
	}
	st := finalState(t, f.out)
	// What worker 1 heartbeated before it died in the build run.
	f.in.Spent = &Spent{Iterations: st.Iterations + 1, AgentRuns: st.AgentRuns + 1, PlanRuns: st.PlanRuns, CostUSD: st.CostUSD + 0.5, WallMS: st.WallMS + 100,
		InFlight: &loop.InFlight{Phase: "build", Task: "T-001", Seq: st.AgentRuns + 1, Transcript: "/machine-1/working-records/transcripts/gone.jsonl"}, Worker: "w1"}
	f.untilDoneOn(1)
	end := finalState(t, f.out)
	if f.out.Outcome.Reason != loop.ReasonDone {
		t.Fatalf("outcome %+v", f.out.Outcome)
	}
	if end.Iterations != local.State.Iterations+1 || end.AgentRuns != local.State.AgentRuns+1 || end.TasksPassed != local.State.TasksPassed {
		t.Fatalf("the dead run must be counted once and credited never: fleet %d iterations %d runs %d passed, local %d %d %d",
			end.Iterations, end.AgentRuns, end.TasksPassed, local.State.Iterations, local.State.AgentRuns, local.State.TasksPassed)
	}
	if d := end.CostUSD - (local.State.CostUSD + 0.5); d > 1e-9 || d < -1e-9 {
		t.Fatalf("cost %.2f, want the local %.2f plus the dead run's 0.50", end.CostUSD, local.State.CostUSD)
	}
	dir := clone(t, remote)
	evs, _ := filepath.Glob(filepath.Join(dir, "working-records", "*.jsonl"))
	found := false
	for _, p := range evs {
		b, _ := os.ReadFile(p)
		found = found || strings.Contains(string(b), "the engine died during this run")
	}
	if !found {
		t.Fatal("the dead run is not in the records")
	}
}

func (f *fleetRun) untilDoneOn(i int) {
	f.t.Helper()
	for n := 0; f.out.Outcome == nil; n++ {
		if n > 40 {
			f.t.Fatal("the loop did not stop in 40 steps")
		}
		if err := f.step(i); err != nil {
			f.t.Fatalf("step %d: %v", f.in.Seq, err)
		}
	}
}

// A push refused because the branch moved: the step fails with what it
// spent, its work is kept on a side branch, and the next attempt runs on the
// new head with that spend counted.
func TestPushRefusedIsHandledNotLost(t *testing.T) {
	src, remote := project(t)
	local, _ := runLocal(t, src)
	f := newFleetRun(t, remote, 2)
	for f.out == nil || f.out.Status.Phase != loop.PhaseBuild {
		if err := f.step(0); err != nil {
			t.Fatal(err)
		}
	}
	// Someone pushes to the branch while the build step runs.
	other := clone(t, remote)
	beforePush = func() {
		os.WriteFile(filepath.Join(other, "NOTES.md"), []byte("a human was here\n"), 0o644)
		gitT(t, other, "add", "NOTES.md")
		gitT(t, other, "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "notes")
		gitT(t, other, "push", "-q", "origin", "main")
	}
	err := f.step(0)
	beforePush = nil
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrPushRefused {
		t.Fatalf("want a refused push, got %v", err)
	}
	var spent Spent
	if err := app.Details(&spent); err != nil || spent.Iterations == 0 {
		t.Fatalf("the refused step's spend must travel with its error: %+v %v", spent, err)
	}
	if !strings.Contains(app.Message(), "kept on branch main-looprinter-refused-") {
		t.Fatalf("message %q", app.Message())
	}
	side := strings.Fields(app.Message()[strings.Index(app.Message(), "kept on branch ")+len("kept on branch "):])[0]
	gitT(t, other, "fetch", "-q", "origin", side) // the refused work is on the remote
	f.in.Spent = &spent
	f.untilDoneOn(1)
	end := finalState(t, f.out)
	if f.out.Outcome.Reason != loop.ReasonDone || end.Iterations != local.State.Iterations+1 || end.TasksPassed != local.State.TasksPassed {
		t.Fatalf("outcome %s, %d iterations %d passed; local %d %d", f.out.Outcome.Reason, end.Iterations, end.TasksPassed, local.State.Iterations, local.State.TasksPassed)
	}
	dir := clone(t, remote)
	if b, err := os.ReadFile(filepath.Join(dir, "NOTES.md")); err != nil || string(b) != "a human was here\n" {
		t.Fatalf("the other push was lost: %q %v", b, err)
	}
}

// A branch whose history was rewritten under the loop stops it BLOCKED.
func TestRewrittenBranchBlocks(t *testing.T) {
	_, remote := project(t)
	f := newFleetRun(t, remote, 1)
	if err := f.step(0); err != nil {
		t.Fatal(err)
	}
	other := clone(t, remote)
	gitT(t, other, "reset", "-q", "--hard", "HEAD~1")
	os.WriteFile(filepath.Join(other, "x"), []byte("x"), 0o644)
	gitT(t, other, "add", "x")
	gitT(t, other, "-c", "user.name=h", "-c", "user.email=h@h", "commit", "-qm", "x")
	gitT(t, other, "push", "-q", "-f", "origin", "main")
	err := f.step(0)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrBlocked || !strings.Contains(app.Message(), "history was rewritten") {
		t.Fatalf("want Blocked, got %v", err)
	}
}
