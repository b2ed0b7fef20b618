package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

func TestRanges(t *testing.T) {
	cases := map[string][]string{
		"T-001..T-003":        {"T-001", "T-002", "T-003"},
		"T-001":               {"T-001"},
		"T-001..T-002, T-004": {"T-001", "T-002", "T-004"},
		"T-001, T-003, T-005": {"T-001", "T-003", "T-005"},
		"T-009..T-010":        {"T-009", "T-010"},
	}
	for want, ids := range cases {
		if got := Ranges(ids); got != want {
			t.Errorf("Ranges(%v) = %q, want %q", ids, got, want)
		}
	}
}

func plan(passes ...bool) *loop.Plan {
	p := &loop.Plan{}
	for i, ok := range passes {
		p.Tasks = append(p.Tasks, loop.Task{ID: "T-00" + string(rune('1'+i)), Passes: ok})
	}
	return p
}

func TestLineInSpecForm(t *testing.T) {
	st := &loop.State{Shape: "cycle", Cycle: 3, Phase: loop.PhaseBuild, CycleGate: "pending", ObjectiveGate: "pending", CostUSD: 1.42,
		StartedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	got := Line(st, plan(true, true, true, false), StateRunning)
	want := "[Cycle 3] T-001..T-003 complete, T-004 in progress. Cycle gate: pending. Objective gate: pending. $1.42 spent."
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	// Not running: the open task is next, not in progress.
	st.Outcome, st.ExitCode = loop.ReasonBudget, 1
	got = Line(st, plan(true, false, false), StateFinished)
	want = "[Cycle 3] T-001 complete, T-002 next, 1 more open. Cycle gate: pending. Objective gate: pending. $1.42 spent. Stopped: BUDGET SPENT (exit 1)."
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	st.Outcome = ""
	if got := Line(st, nil, StateCrashed); got != "[Cycle 3] No plan. Cycle gate: pending. Objective gate: pending. $1.42 spent. CRASHED: the run died without a final record; `looprinter start` resumes it." {
		t.Fatal(got)
	}
	st.ObjectiveGate, st.CycleGate = "not_verified", "pass"
	st.Phase = loop.PhasePost
	if got := Line(st, plan(true), StateRunning); got != "[Cycle 3] T-001 complete, post phases. Cycle gate: pass. Objective gate: NOT VERIFIED. $1.42 spent." {
		t.Fatal(got)
	}
	if got := Line(&loop.State{}, nil, StateNotStarted); got != "not started yet." {
		t.Fatal(got)
	}
}

func TestInspectStates(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	e := Entry{Name: "x", Dir: dir, RunDir: dir}
	if s := Inspect(e); s.State != StateNotStarted {
		t.Fatalf("fresh dir: %s", s.State)
	}
	// A state with a pid, no outcome and no lock holder: crashed.
	st := &loop.State{Shape: "cycle", Cycle: 1, PID: 999999, StartedAt: time.Now()}
	st.Save(dir)
	if s := Inspect(e); s.State != StateCrashed {
		t.Fatalf("dead run: %s", s.State)
	}
	// Holding the lock: running.
	lock, err := loopdir.AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := Inspect(e); s.State != StateRunning || s.PID != os.Getpid() {
		t.Fatalf("locked: %s pid %d", s.State, s.PID)
	}
	lock.Release()
	st.Outcome, st.ExitCode, st.PID = loop.ReasonDone, 0, 0
	st.Save(dir)
	if s := Inspect(e); s.State != StateFinished || s.Outcome != "done" {
		t.Fatalf("done: %s", s.State)
	}
	os.RemoveAll(dir)
	if s := Inspect(e); s.State != StateGone {
		t.Fatalf("removed: %s", s.State)
	}
}

func TestRegistryFind(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	d1, d2 := t.TempDir(), t.TempDir()
	f1, f2 := filepath.Join(d1, "loop.yaml"), filepath.Join(d2, "loop.yaml")
	os.WriteFile(f1, []byte("name: same\n"), 0o644)
	os.WriteFile(f2, []byte("name: \"same\" # comment\n"), 0o644)
	if NameOf(f2) != "same" {
		t.Fatalf("NameOf = %q", NameOf(f2))
	}
	for _, f := range []string{f1, f2} {
		if err := Save(Entry{Name: "same", LoopFile: f, Dir: filepath.Dir(f), RunDir: filepath.Dir(f)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Find("same"); err == nil {
		t.Fatal("an ambiguous name was resolved")
	}
	e, err := Find(d2)
	if err != nil || e.LoopFile != f2 {
		t.Fatalf("by dir: %+v %v", e, err)
	}
	e, err = Find(KeyFor("same", f1))
	if err != nil || e.LoopFile != f1 {
		t.Fatalf("by key: %+v %v", e, err)
	}
	if _, err := Find("nope"); err == nil {
		t.Fatal("found a loop that does not exist")
	}
}

// An interrupted loop is not "finished"; a run whose state could not be
// saved (a full disk) but whose loop_stop record exists is not "crashed".
func TestInspectInterruptedAndStopRecord(t *testing.T) {
	dir := t.TempDir()
	e := Entry{Name: "x", Dir: dir, RunDir: dir}
	st := &loop.State{Shape: "cycle", Cycle: 1, StartedAt: time.Now(), Outcome: loop.ReasonInterrupted, ExitCode: 130}
	st.Save(dir)
	s := Inspect(e)
	if s.State != StateInterrupted || !s.Stopped() || !strings.Contains(s.Line, "INTERRUPTED (exit 130); `looprinter start` resumes it") {
		t.Fatalf("interrupted: %s %q", s.State, s.Line)
	}

	recs := filepath.Join(dir, "working-records", "r.jsonl")
	os.MkdirAll(filepath.Dir(recs), 0o755)
	os.WriteFile(recs, []byte(`{"v":1,"event":"loop_start","run":"r"}`+"\n"+
		`{"v":1,"event":"loop_stop","run":"r","reason":"no_progress","exit_code":2,"summary":"same failure"}`+"\n"+
		`{"v":1,"event":"notify","run":"r"}`+"\n"), 0o644)
	st = &loop.State{Shape: "cycle", Cycle: 1, PID: 999999, StartedAt: time.Now(), Records: recs}
	st.Save(dir)
	s = Inspect(e)
	if s.State != StateFinished || s.Outcome != loop.ReasonNoProgress || s.ExitCode == nil || *s.ExitCode != 2 ||
		strings.Contains(s.Line, "CRASHED") || !strings.Contains(s.Line, "Stopped: NO PROGRESS (exit 2)") {
		t.Fatalf("stop record without a saved outcome: %s %q", s.State, s.Line)
	}
	// A later loop_start without a loop_stop: that run crashed.
	f, _ := os.OpenFile(recs, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"event":"loop_start","run":"r"}` + "\n")
	f.Close()
	if s := Inspect(e); s.State != StateCrashed {
		t.Fatalf("resumed then died: %s", s.State)
	}
}

// A stopped loop whose tasks were all done shows no gate "running" (issue
// 27): only a live loop runs a gate.
func TestLineStoppedNoRunningGate(t *testing.T) {
	st := &loop.State{Shape: "cycle", Cycle: 2, Phase: loop.PhaseObjective, CycleGate: "pass", ObjectiveGate: "not_verified",
		Outcome: loop.ReasonNotVerified, ExitCode: 3, StartedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	got := Line(st, plan(true, true), StateFinished)
	if strings.Contains(got, "running") || !strings.HasPrefix(got, "[Cycle 2] T-001..T-002 complete. Cycle gate: pass. Objective gate: NOT VERIFIED.") {
		t.Fatalf("stopped: %s", got)
	}
	st.Outcome = ""
	if got := Line(st, plan(true, true), StateRunning); !strings.Contains(got, "objective gate running") {
		t.Fatalf("live: %s", got)
	}
}
