package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// SIGKILL in the middle of a wave (parallel: 3), simulated: when the
// second run of the wave is being judged (its layer applied, its verdict
// not saved; the first run judged and saved, its task passed; the third
// run's layer not applied), the loop folder and the engine's private
// folder are copied as they are, and put back after the engine ended, as
// a crash at that moment would leave them. The restarted engine judges the
// two runs still in flight as runs that died, never runs the passed task
// again, keeps its applied work, and ends DONE.
func TestCrashMidWaveResumes(t *testing.T) {
	needLayers(t, "a wave needs a copy-on-write layer per run")
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"three files exist\"\nagent: {backend: command, command: \"AGENT\", timeout: 60s}\nparallel: 3\nverify: [test -s out/a.txt, test -s out/b.txt, test -s out/c.txt]\n",
		"agent.txt": "== plan\nplan T-001:out/a.txt T-002:out/b.txt T-003:out/c.txt\n== build\nrun sleep 0.5\nauto\n",
	}
	// The agent caps its cost, so the first wave's reserve is known: three
	// runs at once.
	files["loop.yaml"] = strings.Replace(files["loop.yaml"], "timeout: 60s}", "timeout: 60s, max_budget_usd: 1}", 1)
	copyOut, crash := crashAt(t, dir, func(e record.Event) bool { return e.Event == record.AgentEnd && e.Slot == 2 })
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{Subscribers: []func(record.Event){copyOut}})
	if out.Reason != ReasonDone || len(events(evs, record.TaskPassed)) != 3 {
		t.Fatalf("the first run: %s, %d tasks passed", out.Reason, len(events(evs, record.TaskPassed)))
	}
	starts := 0
	for _, e := range events(evs, record.AgentStart) {
		if e.Phase == "build" && e.AgentRun != "" {
			starts++
		}
	}
	if starts != 3 {
		t.Fatalf("%d build runs of a wave started, want 3", starts)
	}
	crash() // both folders back as they were at that moment
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.InFlight != nil || len(st.InFlightMore) != 2 {
		t.Fatalf("the saved state at the crash: slot 1 in flight %v, others %d; want slot 1 judged and 2 in flight", st.InFlight, len(st.InFlightMore))
	}
	aText := readFile(t, filepath.Join(dir, "out/a.txt"))

	out, evs, _ = fakeLoopIn(t, dir, files, nil, Options{})
	if out.Reason != ReasonDone {
		t.Fatalf("after the crash: %s: %s", out.Reason, out.Summary)
	}
	died := map[string]bool{}
	for _, e := range events(evs, record.AgentEnd) {
		if strings.Contains(e.Error, "the engine died") {
			died[e.Task] = true
		}
	}
	if !died["T-002"] || !died["T-003"] || died["T-001"] {
		t.Fatalf("judged as runs that died: %v; want T-002 and T-003", died)
	}
	for _, e := range events(evs, record.AgentStart) {
		if e.Task == "T-001" {
			t.Fatalf("T-001 passed before the crash and ran again: %+v", e)
		}
	}
	if got := readFile(t, filepath.Join(dir, "out/a.txt")); got != aText {
		t.Fatalf("T-001's applied work changed: %q, was %q", got, aText)
	}
	if out.State.TasksPassed != 3 || len(out.State.InFlightMore) != 0 || out.State.InFlight != nil {
		t.Fatalf("%d tasks passed, runs in flight %v %v", out.State.TasksPassed, out.State.InFlight, out.State.InFlightMore)
	}
}

// needLayers skips a test that needs bubblewrap with copy-on-write layers
// where they cannot run (in CI, which installs bubblewrap, it fails).
func needLayers(t *testing.T, why string) {
	t.Helper()
	err := sandbox.LayerProbe()
	if _, lerr := exec.LookPath("bwrap"); lerr != nil {
		err = lerr
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI runs where bubblewrap lays copy-on-write layers, but: %v", err)
	}
	t.Skipf("no bwrap with copy-on-write layers here (%s): %v", why, err)
}

// crashAt simulates a SIGKILL at the first record at matches: the
// subscriber copies the loop folder dir and the engine's private folder as
// they are then, and crash puts both back, as a crash at that moment would
// leave them, once the engine has ended.
func crashAt(t *testing.T, dir string, at func(record.Event) bool) (sub func(record.Event), crash func()) {
	t.Helper()
	snap := t.TempDir()
	priv := string(loopdir.PrivateOf(dir))
	var once sync.Once
	sub = func(e record.Event) {
		if at(e) {
			once.Do(func() {
				for i, from := range []string{dir, priv} {
					to := filepath.Join(snap, []string{"dir", "priv"}[i])
					exec.Command("cp", "-a", from, to).Run() // overlayfs's mode-000 work folders are not needed
				}
			})
		}
	}
	crash = func() {
		t.Helper()
		for i, to := range []string{dir, priv} {
			exec.Command("chmod", "-R", "u+rwx", to).Run()
			if err := os.RemoveAll(to); err != nil {
				t.Fatal(err)
			}
			if err := exec.Command("cp", "-a", filepath.Join(snap, []string{"dir", "priv"}[i]), to).Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return sub, crash
}
