package loop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// taskGates are the task gate's verify records (git.rollback: task) by
// task, and the run each names.
func taskGates(evs []record.Event) (pass map[string]bool, run map[string]string) {
	pass, run = map[string]bool{}, map[string]string{}
	for _, e := range events(evs, record.Verify) {
		if e.Gate == "task" {
			pass[e.Task] = e.Pass != nil && *e.Pass
			run[e.Task] = e.AgentRun
		}
	}
	return pass, run
}

// buildRuns are the build runs of a wave, by task.
func buildRuns(evs []record.Event) map[string]string {
	runs := map[string]string{}
	for _, e := range events(evs, record.AgentStart) {
		if e.Phase == "build" && e.AgentRun != "" {
			runs[e.Task] = e.AgentRun
		}
	}
	return runs
}

// The runs of a wave (parallel: 2) are judged at once: each run's task
// gate (git.rollback: task) waits, up to 15 s, until the other run's waits
// too (a meeting point on the loopback, the checks on the host's network).
// Judged one after another, T-001's gate waits alone, every later check
// is told "alone", the cycle gate fails and the loop stops on its
// iteration budget; judged at once, the two gates meet, T-002's gate (on
// the tree both runs' applies leave) passes and the loop is DONE. Each
// task gate's record names its own run.
func TestWaveRunsJudgedAtOnce(t *testing.T) {
	needLayers(t, "a wave needs a copy-on-write layer per run")
	if runtime.NumCPU() < 2 {
		t.Skipf("%d core: the runs are judged one at a time here", runtime.NumCPU())
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	z := newRendezvous(t, 2, 15*time.Second)
	check := fmt.Sprintf(`if [ ! -e out/a.txt ] && [ ! -e out/b.txt ]; then exit 1; fi
exec 3<>/dev/tcp/127.0.0.1/%d && read -r -t 60 word <&3 && echo "$word" && test "$word" = together && test -s out/a.txt && test -s out/b.txt
`, z.port())
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"out/a.txt and out/b.txt exist\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s, max_budget_usd: 1}\n" +
			"parallel: 2\nbudget: {iterations: 2}\ngit: {rollback: task}\nchecks: {network: host}\nverify: [bash check.sh]\n",
		"check.sh":  check,
		"agent.txt": "== plan\nplan T-001:out/a.txt T-002:out/b.txt\n== build\nrun mkdir -p out\nauto\n",
	}
	gitTree(t, dir, files)
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	pass, run := taskGates(evs)
	if out.Reason != ReasonDone {
		t.Fatalf("%s: %s (the most checks waiting at once: %d of 2; task gates %v)", out.Reason, out.Summary, z.most, pass)
	}
	runs := buildRuns(evs)
	if len(runs) != 2 {
		t.Fatalf("build runs of a wave %v, want 2", runs)
	}
	if !pass["T-002"] {
		t.Errorf("T-002's task gate failed: %v", pass)
	}
	for task, r := range runs {
		if run[task] != r {
			t.Errorf("%s's task gate names run %q, its run is %q", task, run[task], r)
		}
	}
	if len(events(evs, record.TaskPassed)) != 2 {
		t.Errorf("%d tasks passed, want 2", len(events(evs, record.TaskPassed)))
	}
	// Both task gates took the checks run at once: none ran again after
	// its apply (their logs are named by task; a gate's own by number).
	again, _ := filepath.Glob(filepath.Join(loopdir.Dir(dir).Checks(), "*-task-1.log"))
	at, _ := filepath.Glob(filepath.Join(loopdir.Dir(dir).Checks(), "*-task-T-00*-1.log"))
	if len(again) != 0 || len(at) != 2 {
		t.Errorf("task gates run after the applies %v, at once %v; want none and 2", again, at)
	}
}

// A run whose predecessor did not land as assumed is judged on the tree
// as its apply leaves it, never on its prefix's: T-001's run also rewrites
// the protected check.sh to pass always. Judged at once, both runs' task
// gates ran with that check.sh laid (and passed); applied, the guard puts
// check.sh back (a protected_file violation: T-001 fails), so both task
// gates' verdicts are the ones serial judging gives, on the real check:
// failing (out/b.txt says "bad").
func TestWaveRunAfterRefusedJudgedSerially(t *testing.T) {
	needLayers(t, "a wave needs a copy-on-write layer per run")
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"out/b.txt says good\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s, max_budget_usd: 1}\n" +
			"parallel: 2\nbudget: {iterations: 2}\ngit: {rollback: task}\nverify: [bash check.sh]\n",
		"check.sh": "test -s out/a.txt && grep -q good out/b.txt\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt T-002:out/b.txt\n== build\n" +
			`run mkdir -p out; if [ "$LOOPRINTER_TASK" = T-001 ]; then echo done > out/a.txt; echo 'exit 0' > check.sh; else echo bad > out/b.txt; fi; echo "$LOOPRINTER_TASK: done" >> output/progress.txt` +
			"\nmark\n",
	}
	gitTree(t, dir, files)
	_, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	if len(buildRuns(evs)) != 2 {
		t.Fatalf("build runs of a wave %v, want 2", buildRuns(evs))
	}
	tampered := false
	for _, e := range events(evs, record.Violation) {
		if e.Task == "T-001" && e.File == "check.sh" {
			tampered = true
		}
	}
	if !tampered {
		t.Fatalf("no violation for T-001's check.sh: %v", events(evs, record.Violation))
	}
	pass, _ := taskGates(evs)
	if _, ok := pass["T-002"]; !ok {
		t.Fatalf("no task gate for T-002: %v", pass)
	}
	if pass["T-001"] || pass["T-002"] {
		t.Fatalf("task gates %v: judged on the tree T-001's refused check.sh left, not the folder's", pass)
	}
}

// gitTree writes files in dir, commits them (the loop file and the
// agent's script ignored), so that the engine commits its runs.
func gitTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	files[".gitignore"] = "working-records/\nagent.txt\nloop.yaml\n"
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitInit(t, dir)
}
