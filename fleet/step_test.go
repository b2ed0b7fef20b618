package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/fleettest"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/rollback"
)

func project(t *testing.T) (src, remote string) { return fleettest.Repo(t, fleettest.Cycle("demo")) }

func gitT(t *testing.T, dir string, args ...string) string { return fleettest.Git(t, dir, args...) }

func clone(t *testing.T, remote string) string { return fleettest.Clone(t, remote) }

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
		f.workers = append(f.workers, &Worker{Dir: filepath.Join(t.TempDir(), fmt.Sprintf("w%d", i+1)), Identity: fmt.Sprintf("w%d", i+1), Queue: fmt.Sprintf("q@w%d", i+1), Hooks: cli.RunHooks})
		if i > 0 {
			// The others run their steps in a process of their own, as
			// `looprinter worker` does: both ways give the same loop.
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			f.workers[i].Exec = exe
		}
	}
	f.in = StepInput{WorkflowID: "demo", Seq: 1, Name: "demo", LoopFile: "loop.yaml", Spec: []byte(fleettest.Cycle("demo")["loop.yaml"]), Remote: remote, Branch: "main"}
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

// Steps that move between workers through the remote end as the same loop
// run locally ends: same outcome, counters and records.
func TestStepsAcrossWorkersMatchALocalRun(t *testing.T) {
	src, remote := project(t)
	local, localEvents := fleettest.RunLocal(t, src)
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
	if got := fleettest.Events(t, loopdir.Dir(dir).Records()); !reflect.DeepEqual(got, localEvents) {
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

// A review loop on the fleet reviews what a local review of the same
// branch reviews: the last commit the loop started from, though every step
// adds a commit (the reviewer's diff is the same each round), and the
// fixer's own commits reach the branch.
func TestReviewLoopMatchesALocalRun(t *testing.T) {
	p, change := fleettest.Review("demo")
	src, remote := fleettest.RepoWithChange(t, p, change)
	local, localEvents := fleettest.RunLocal(t, src)
	if local.Reason != loop.ReasonDone {
		t.Fatalf("the local run: %s %s", local.Reason, local.Summary)
	}
	f := newFleetRun(t, remote, 3)
	f.in.Spec = []byte(p["loop.yaml"])
	f.untilDone()
	if f.out.Outcome.Reason != local.Reason || f.out.Outcome.Summary != local.Summary {
		t.Fatalf("fleet %+v, local %s: %s", f.out.Outcome, local.Reason, local.Summary)
	}
	dir := clone(t, remote)
	if got := fleettest.Events(t, loopdir.Dir(dir).Records()); !reflect.DeepEqual(got, localEvents) {
		t.Fatalf("records differ:\nfleet %q\nlocal %q", got, localEvents)
	}
	localDir := filepath.Dir(filepath.Dir(local.Records))
	for _, round := range []string{"round-1", "round-2"} {
		fleetDiff, localDiff := reviewedDiff(t, dir, round), reviewedDiff(t, localDir, round)
		if fleetDiff != localDiff || (round == "round-1" && !strings.Contains(fleetDiff, "REVIEWED-CHANGE")) {
			t.Fatalf("%s: the fleet's reviewer saw another diff:\nfleet:\n%s\nlocal:\n%s", round, fleetDiff, localDiff)
		}
	}
	log := gitT(t, dir, "log", "--format=%s")
	if !strings.Contains(log, "fix F-1: guard division by zero") || !strings.Contains(log, "the change") {
		t.Fatalf("the fixer's commits or the change are not on the branch:\n%s", log)
	}
}

// reviewedDiff is the diff a round's reviewer was given.
func reviewedDiff(t *testing.T, dir, round string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "working-records", "transcripts", "*-reviewer-"+round+".prompt.md"))
	if len(m) != 1 {
		t.Fatalf("%s: %d reviewer prompts for %s", dir, len(m), round)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "```diff\n")
	if i < 0 {
		return "(no diff)"
	}
	s = s[i:]
	return s[:strings.Index(s[3:], "```")+6]
}

// A loop that stops on its budget goes back to its best checkpoint, as a
// local run does: on the fleet the branch moves forward to the
// checkpoint's files (never back), and the undone work is kept on the
// remote under refs/looprinter/NAME/.
func TestBudgetStopGoesBackToTheBestStateForward(t *testing.T) {
	p := fleettest.CycleBudget("demo")
	src, remote := fleettest.Repo(t, p)
	local, localEvents := fleettest.RunLocal(t, src)
	if local.Reason != loop.ReasonTimeCost {
		t.Fatalf("the local run: %s %s", local.Reason, local.Summary)
	}
	f := newFleetRun(t, remote, 3)
	f.in.Spec = []byte(p["loop.yaml"])
	var heads []string
	for f.out == nil || f.out.Outcome == nil {
		if len(heads) > 40 {
			t.Fatal("the loop did not stop in 40 steps")
		}
		if err := f.step(len(heads) % 3); err != nil {
			t.Fatalf("step %d: %v", f.in.Seq, err)
		}
		heads = append(heads, f.out.Commit)
	}
	if f.out.Outcome.Reason != local.Reason {
		t.Fatalf("fleet %+v, local %s", f.out.Outcome, local.Reason)
	}
	dir := clone(t, remote)
	if got := fleettest.Events(t, loopdir.Dir(dir).Records()); !reflect.DeepEqual(got, localEvents) {
		t.Fatalf("records differ:\nfleet %q\nlocal %q", got, localEvents)
	}
	for _, h := range heads {
		gitT(t, dir, "merge-base", "--is-ancestor", h, "HEAD") // every step's push went forward
	}
	localDir := filepath.Dir(filepath.Dir(local.Records))
	for _, name := range []string{"hello.txt", "output/plan.json"} {
		want, _ := os.ReadFile(filepath.Join(localDir, name))
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s on the branch is not as the local run left it at its best state: %q %v, want %q", name, got, err, want)
		}
	}
	if out := gitT(t, dir, "ls-remote", "origin", rollback.RefPrefix("demo")+"*"); !strings.Contains(out, "attempt-1") {
		t.Fatalf("the undone work is not kept on the remote: %q", out)
	}
}

// A worker that died in a build run: the step runs again elsewhere from the
// last pushed commit; the dead run is counted (iteration, agent run, cost)
// and recorded, and nothing it did is credited.
func TestDeadRunCountedNeverCredited(t *testing.T) {
	src, remote := project(t)
	local, _ := fleettest.RunLocal(t, src)
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
	found := fleettest.RecordsMention(loopdir.Dir(dir).Records(), "the engine died during this run")
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
	local, _ := fleettest.RunLocal(t, src)
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

// An attempt that pushed but never reported (its worker was taken for dead
// while it still ran): the next attempt does not build on its commit; it
// runs the step again from the loop's last commit and replaces it, and the
// loop's records read as if it never ran.
func TestUnreportedPushIsReplaced(t *testing.T) {
	src, remote := project(t)
	_, localEvents := fleettest.RunLocal(t, src)
	f := newFleetRun(t, remote, 2)
	for f.out == nil || f.out.Status.Phase != loop.PhaseBuild {
		if err := f.step(0); err != nil {
			t.Fatal(err)
		}
	}
	before := f.in
	if err := f.step(0); err != nil { // pushed; its result is lost
		t.Fatal(err)
	}
	zombie := f.out.Commit
	f.in = before
	if err := f.step(1); err != nil {
		t.Fatal(err)
	}
	dir := clone(t, remote)
	if _, err := git(dir, "merge-base", "--is-ancestor", zombie, "HEAD"); err == nil {
		t.Fatalf("the step was built on the unreported commit %s", zombie)
	}
	gitT(t, dir, "merge-base", "--is-ancestor", before.Commit, "HEAD")
	if out := gitT(t, dir, "ls-remote", "origin", "main-looprinter-unreported-*"); !strings.Contains(out, zombie) {
		t.Fatalf("the unreported commit %s is not kept: %q", zombie, out)
	}
	f.untilDoneOn(1)
	dir = clone(t, remote)
	if got := fleettest.Events(t, loopdir.Dir(dir).Records()); !reflect.DeepEqual(got, localEvents) {
		t.Fatalf("records differ:\nfleet %q\nlocal %q", got, localEvents)
	}
}

// The agents' HOME and caches (the copy-on-write layers over them, or the
// private HOME where no layer can be made) persist from step to step of a
// loop on the same worker, as from run to run of a local loop: an agent
// CLI's login refresh and sessions are not lost at every step. The loop
// folder's own layer, what an attempt's run left, is not kept.
func TestAgentHomeKeptFromStepToStepOnAWorker(t *testing.T) {
	_, remote := project(t)
	f := newFleetRun(t, remote, 2)
	if err := f.step(0); err != nil {
		t.Fatal(err)
	}
	if f.out.Outcome != nil {
		t.Fatalf("the loop stopped after one step: %+v", f.out.Outcome)
	}
	dir := filepath.Join(f.workers[0].Dir, safeName(f.in.WorkflowID), "repo")
	p := loopdir.PrivateOf(dir)
	plant := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("session"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kept := []string{
		filepath.Join(p.LayerUpper("tree-0123456789ab"), ".claude", ".credentials.json"),
		filepath.Join(p.AgentHome(), ".codex", "auth.json"),
		filepath.Join(p.AgentCache(), "go-build", "x"),
	}
	gone := filepath.Join(p.LayerUpper("loop"), "left-by-a-dead-run.txt")
	for _, k := range append(kept, gone) {
		plant(k)
	}
	if err := f.step(0); err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		if b, err := os.ReadFile(k); err != nil || string(b) != "session" {
			t.Errorf("the next step on the same worker lost %s: %q %v", k, b, err)
		}
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the loop folder's layer of an earlier attempt was kept: %v", err)
	}
	if _, ok := f.out.Private["state.json"]; !ok {
		t.Fatal("the step's private files lack the state")
	}
	for name := range f.out.Private {
		if name == "layers" || name == "home" || name == "cache" {
			t.Errorf("the workflow carries %s, which stays on the worker", name)
		}
	}
}
