package record

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Each kind of record reads as one line that says what happened (issue 18).
func TestDescribeEachEvent(t *testing.T) {
	yes, no := Bool(true), Bool(false)
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Event: LoopStart, Loop: "demo", Shape: "cycle", PID: 42}, "loop demo started (cycle shape, pid 42)"},
		{Event{Event: LoopStart, Loop: "demo", Shape: "ralph", PID: 7, Resumed: true}, "loop demo started (ralph shape, pid 7), resuming"},
		{Event{Event: LoopStop, Reason: "budget", ExitCode: Int(3), Summary: "2 runs"}, "loop stopped: BUDGET (exit 3) 2 runs"},
		{Event{Event: LoopStop, Reason: "done"}, "loop stopped: DONE (exit 0) "},
		{Event{Event: AgentStart, Backend: "claude", Phase: "plan"}, "agent claude/- started: plan"},
		{Event{Event: AgentStart, Backend: "codex", Model: "o3", Phase: "build", Task: "T-002"}, "agent codex/o3 started: build T-002"},
		{Event{Event: AgentEnd, Phase: "plan", Status: "ok", ExitCode: Int(0), Turns: 3, CostUSD: 0.125, DurationMS: 1500}, "agent plan ended: ok, exit 0, 3 turns, $0.1250, 1.5s"},
		{Event{Event: AgentEnd, Phase: "build", Task: "T-001", Status: "failed", ExitCode: Int(2), Turns: 1, CostUSD: 2, DurationMS: 250, Error: "boom\nmore"}, "agent build T-001 ended: failed, exit 2, 1 turns, $2.0000, 0.2s — boom"},
		{Event{Event: AgentRetry, Phase: "build", Status: "rate_limited", WaitMS: 2500, Attempt: 2}, "agent build: rate_limited, retrying in 2s (attempt 2)"},
		{Event{Event: ToolCall, Tool: "Bash", Message: "ls"}, "  tool Bash ls"},
		{Event{Event: Verify, Gate: "cycle", Pass: yes, Checks: []Check{{Command: "go test", Pass: true}}}, "cycle gate PASS: go test (ok)"},
		{Event{Event: Verify, Gate: "objective", Pass: no, Checks: []Check{{Command: "a", Pass: true}, {Command: "b", ExitCode: 3}}, Errors: []string{"e1"}}, "objective gate FAIL: a (ok); b (exit 3); e1"},
		{Event{Event: Verify, Gate: "cycle", Message: "no checks"}, "cycle gate FAIL: no checks"},
		{Event{Event: Baseline, Pass: yes, Checks: []Check{{Command: "x", Pass: true}}}, "baseline PASS: x (ok)"},
		{Event{Event: PlanArchived, To: "working-records/plan_cycle_1.json", Reason: "cycle gate failed"}, "plan archived to working-records/plan_cycle_1.json (cycle gate failed)"},
		{Event{Event: PlanInvalid, Errors: []string{"a", "b"}}, "plan invalid: a; b"},
		{Event{Event: TaskPassed, Task: "T-003"}, "task T-003 passed"},
		{Event{Event: Violation, Kind: "protected_file", Message: "m"}, "VIOLATION protected_file: m"},
		{Event{Event: SameFailure, Repeats: 3, Signature: "sig"}, "same failure 3 times in a row (sig)"},
		{Event{Event: Setup, Pass: yes}, "setup PASS"},
		{Event{Event: Setup}, "setup FAIL"},
		{Event{Event: Gate, Gate: "cycle", Pass: no, Message: "why"}, "cycle gate FAIL why"},
		{Event{Event: Warning, Message: "careful"}, "warning: careful"},
		{Event{Event: Paused}, "paused"},
	} {
		if got := Describe(c.e); got != c.want {
			t.Errorf("Describe(%s): %q, want %q", c.e.Event, got, c.want)
		}
	}
}

// Summarize puts the local time and [cycle iteration] before the description.
func TestSummarize(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{TS: ts, Event: TaskPassed, Task: "T-001", Cycle: 2, Iteration: 5}, "03:04:05 [c2 i5] task T-001 passed"},
		{Event{TS: ts, Event: TaskPassed, Task: "T-001", Cycle: 1}, "03:04:05 [c1] task T-001 passed"},
		{Event{TS: ts, Event: TaskPassed, Task: "T-001", Iteration: 4}, "03:04:05 task T-001 passed"},
		// A run of a wave: its slot after its iteration.
		{Event{TS: ts, Event: TaskPassed, Task: "T-002", Cycle: 1, Iteration: 3, Slot: 2}, "03:04:05 [c1 i3 s2] task T-002 passed"},
		{Event{TS: ts, Event: TaskPassed, Task: "T-001", Cycle: 1, Iteration: 2, Slot: 1}, "03:04:05 [c1 i2 s1] task T-001 passed"},
	} {
		if got := Summarize(c.e); got != c.want {
			t.Errorf("Summarize: %q, want %q", got, c.want)
		}
	}
}

// Subscribers see each event as written, stamped; a follower started
// without replay sees only what comes after it.
func TestSubscribersAndFollowerFromNow(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "r9", "command", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var seen []Event
	w.Subscribe(func(e Event) { seen = append(seen, e) })
	w.Write(Event{Event: LoopStart})
	fl := NewFollower(dir, false)
	w.Write(Event{Event: TaskPassed, Task: "T-001"})
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(seen) != 2 || seen[1].Run != "r9" || seen[1].V != Version || seen[1].TS.IsZero() {
		t.Fatalf("subscriber saw %+v", seen)
	}
	got := fl.Poll()
	if len(got) != 1 || got[0].Task != "T-001" {
		t.Fatalf("follower from now saw %+v, want only the task_passed", got)
	}
	if again := fl.Poll(); len(again) != 0 {
		t.Errorf("second poll saw %+v again", again)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("records folder mode %v, want 0700", st.Mode().Perm())
	}
	if !strings.HasSuffix(w.Path(), "-loop-command.jsonl") {
		t.Errorf("record file %s", w.Path())
	}
}

// Which sandbox is in force is information, not a warning; other warnings
// say they are.
func TestDescribeSandboxIsInformation(t *testing.T) {
	if got := Describe(Event{Event: Warning, Kind: "sandbox", Message: "agent runs are confined by: bwrap"}); got != "agent runs are confined by: bwrap" {
		t.Errorf("sandbox: %q", got)
	}
	if got := Describe(Event{Event: Warning, Message: "no verify checks"}); got != "warning: no verify checks" {
		t.Errorf("warning: %q", got)
	}
}
