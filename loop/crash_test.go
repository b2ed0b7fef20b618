package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// crashAdapter is a hostile agent that edits a protected test and marks its
// own task done. As its run starts, it takes what a crash at that moment
// would leave on disk: the engine's private folder and the public
// state.json.
type crashAdapter struct {
	dir      string
	disk     map[string][]byte
	inFlight *State
}

func (a *crashAdapter) Name() string { return "crashprobe" }

func (a *crashAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	a.disk = map[string][]byte{}
	filepath.WalkDir(string(loopdir.PrivateOf(a.dir)), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			a.disk[p], _ = os.ReadFile(p)
		}
		return nil
	})
	pub := loopdir.Dir(a.dir).State()
	a.disk[pub], _ = os.ReadFile(pub)
	a.inFlight, _ = LoadState(a.dir)
	return agent.Invocation{Path: "/bin/sh", Args: []string{"-c", hostileRun}, Env: []string{}}, nil
}

const hostileRun = `echo 'package a // weakened' > a_test.go
printf '{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":true,"notes":""}]}' > output/plan.json`

func (a *crashAdapter) NewParser(req agent.Request) agent.Parser { return crashParser{} }

type crashParser struct{}

func (crashParser) Line([]byte) []agent.ToolEvent  { return nil }
func (crashParser) Finish(agent.Exit) agent.Result { return agent.Result{Status: agent.StatusOK} }

// onePlan is a plan of one open task.
const onePlan = `{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`

// onePlanLoop writes, in dir, a cycle loop file (sandbox off, plus extra)
// whose plan of one task is already made, and returns it parsed, its agent
// the registered backend.
func onePlanLoop(tb testing.TB, dir, extra, backend string) *spec.Loop {
	tb.Helper()
	os.MkdirAll(filepath.Join(dir, loopdir.OutputDir), 0o755)
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(onePlan), 0o644)
	src := []byte("objective: \"a.txt exists\"\nagent: {backend: command, command: \"true\"}\nsandbox: off\n" + extra)
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	l.Agent.Backend = backend
	return l
}

// SIGKILL while a build run is under way, simulated: the disk is put back as
// it was when the run's agent started (the engine's private folder, the
// public state), the agent's edits are left in place, and the loop starts
// again. The run was saved as in flight, synced, before its agent started:
// the restarted engine counts it, restores the protected file it edited,
// takes back the mark it gave itself, and never takes the state for forged.
func TestCrashDuringARunIsJudged(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	ad := &crashAdapter{dir: dir}
	agent.Register("crashprobe", func() agent.Adapter { return ad })
	os.WriteFile(filepath.Join(dir, "a_test.go"), []byte("package a\n"), 0o644)
	l := onePlanLoop(t, dir, "budget: {iterations: 1}\nprotect: [\"**/*_test.go\"]\n", "crashprobe")
	plan := onePlan
	if _, err := Run(context.Background(), l, Options{}); err != nil {
		t.Fatal(err)
	}
	if ad.inFlight == nil || ad.inFlight.InFlight == nil || ad.inFlight.Iterations != 1 {
		t.Fatalf("the state as the agent started: %+v; want the run in flight and counted", ad.inFlight)
	}
	// The crash: what the engine did after the agent started is lost.
	if err := os.RemoveAll(string(loopdir.PrivateOf(dir))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(string(loopdir.PrivateOf(dir)), 0o700)
	for p, data := range ad.disk {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, data, 0o600)
	}
	os.WriteFile(filepath.Join(dir, "a_test.go"), []byte("package a // weakened\n"), 0o644)
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(strings.Replace(plan, `"passes":false`, `"passes":true`, 1)), 0o644)

	var evs []record.Event
	out, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){func(e record.Event) { evs = append(evs, e) }}})
	if err != nil {
		t.Fatal(err)
	}
	var died, restored, unmarked bool
	for _, e := range evs {
		switch {
		case e.Event == record.Violation && e.Kind == "state_forged":
			t.Fatalf("the engine's own state was taken for forged: %s", e.Message)
		case e.Event == record.AgentEnd && strings.Contains(e.Error, "the engine died"):
			died = true
		case e.Event == record.Violation && e.Kind == "protected_file" && e.File == "a_test.go":
			restored = true
		case e.Event == record.Warning && e.Kind == "unjudged_mark":
			unmarked = true
		}
	}
	if !died || !restored || !unmarked {
		t.Fatalf("the dead run was not judged: agent_end %v, protected file restored %v, mark taken back %v", died, restored, unmarked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a_test.go")); string(b) != "package a\n" {
		t.Fatalf("a_test.go: %q", b)
	}
	if out.Reason == ReasonDone || out.State.Iterations != 1 || out.State.TasksPassed != 0 {
		t.Fatalf("outcome %s, %d iterations, %d tasks passed; want the run counted and nothing passed", out.Reason, out.State.Iterations, out.State.TasksPassed)
	}
}

// One sync of the state a step: the end of a build run is made durable
// together with the start of the next one (a group commit), not on its own.
// Twenty iterations of a no-op agent: twenty syncs, give or take the
// loop's start and stop.
func TestOneStateSyncPerStep(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	ad := &timedAdapter{}
	agent.Register("syncprobe", func() agent.Adapter { return ad })
	l := onePlanLoop(t, dir, "budget: {iterations: 20, same_failure: 100}\n", "syncprobe")
	var first, last int64
	runs := 0
	sub := func(e record.Event) {
		if e.Event == record.AgentStart {
			if runs == 0 {
				first = journalSyncs.Load()
			}
			last = journalSyncs.Load()
			runs++
		}
	}
	before := journalSyncs.Load()
	out, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){sub}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != ReasonBudget || runs != 20 {
		t.Fatalf("outcome %s after %d runs, want budget_spent after 20", out.Reason, runs)
	}
	if between := last - first; between != int64(runs-1) {
		t.Fatalf("%d state syncs between the first and the last of %d runs; want one a step (%d)", between, runs, runs-1)
	}
	if total := journalSyncs.Load() - before; total > int64(runs)+4 {
		t.Fatalf("%d state syncs for a loop of %d runs; want at most %d", total, runs, runs+4)
	}
}
