package spend

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/record"
)

func ev(event, phase, task string, usd float64, in, out int64) record.Event {
	return record.Event{Run: "r1", Event: event, Phase: phase, Task: task, Backend: "claude", Model: "sonnet",
		CostUSD: usd, InputTokens: in, OutputTokens: out, Turns: 2}
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s is nil, want %v", name, want)
	}
	if math.Abs(*got-want) > 1e-9 {
		t.Fatalf("%s = %v, want %v", name, *got, want)
	}
}

// A cycle: one plan run, four build runs of which two passed their task.
func TestCycleCostPerPassedTask(t *testing.T) {
	evs := []record.Event{
		{Run: "r1", Event: record.LoopStart},
		ev(record.AgentStart, "plan", "", 0, 0, 0), ev(record.AgentEnd, "plan", "", 0.50, 1000, 100),
		ev(record.AgentStart, "build", "T-001", 0, 0, 0), ev(record.AgentEnd, "build", "T-001", 0.25, 2000, 200),
		{Run: "r1", Event: record.TaskPassed, Task: "T-001"},
		ev(record.AgentStart, "build", "T-002", 0, 0, 0), ev(record.AgentEnd, "build", "T-002", 0.25, 2000, 200),
		ev(record.AgentStart, "build", "T-002", 0, 0, 0), ev(record.AgentEnd, "build", "T-002", 0.25, 2000, 200),
		ev(record.AgentStart, "build", "T-002", 0, 0, 0), ev(record.AgentEnd, "build", "T-002", 0.25, 2000, 200),
		{Run: "r1", Event: record.TaskPassed, Task: "T-002"},
	}
	r := FromEvents(evs)
	if r.Attempts != 4 || r.Passed != 2 {
		t.Fatalf("attempts %d passed %d, want 4 and 2", r.Attempts, r.Passed)
	}
	near(t, "cost per attempt", r.CostPerAttempt, 0.25)
	near(t, "success rate", r.SuccessRate, 0.5)
	near(t, "cost per passed task", r.CostPerPassedTask, 0.50) // 0.25 ÷ 0.5
	near(t, "all in", r.AllInPerPassedTask, 0.75)              // 1.50 ÷ 2
	if math.Abs(r.Total.CostUSD-1.5) > 1e-9 || r.Total.Runs != 5 || r.Total.InputTokens != 9000 || r.Total.OutputTokens != 900 || r.Total.Turns != 10 {
		t.Fatalf("total = %+v", r.Total)
	}
	if len(r.ByPhase) != 2 || r.ByPhase[0].Key != "build" || r.ByPhase[0].Runs != 4 || math.Abs(r.ByPhase[0].CostUSD-1.0) > 1e-9 {
		t.Fatalf("by phase = %+v", r.ByPhase)
	}
	// T-002 cost three runs: it comes first.
	if r.ByTask[0].Key != "T-002" || r.ByTask[0].Runs != 3 {
		t.Fatalf("by task = %+v", r.ByTask)
	}
	if r.ByTask[1].Key != none || r.ByTask[1].Runs != 1 {
		t.Fatalf("the plan run has no task: %+v", r.ByTask)
	}
	if len(r.ByModel) != 1 || r.ByModel[0].Key != "sonnet" || r.ByModel[0].Runs != 5 {
		t.Fatalf("by model = %+v", r.ByModel)
	}
}

// Nothing passed yet: the cost per passed task is unknown, not zero or
// infinite.
func TestNothingPassed(t *testing.T) {
	r := FromEvents([]record.Event{
		ev(record.AgentStart, "ralph", "", 0, 0, 0), ev(record.AgentEnd, "ralph", "", 0.4, 0, 0),
		{Run: "r1", Event: record.Verify, Gate: "verify", Pass: record.Bool(false)},
	})
	near(t, "cost per attempt", r.CostPerAttempt, 0.4)
	near(t, "success rate", r.SuccessRate, 0)
	if r.CostPerPassedTask != nil || r.AllInPerPassedTask != nil {
		t.Fatalf("cost per passed task = %v, want nil", r.CostPerPassedTask)
	}
	if FromEvents(nil).CostPerAttempt != nil {
		t.Fatal("no attempts: cost per attempt must be nil")
	}
}

// Ralph: a success is a verify pass; the cycle gate and objective gate
// verify records are not successes of an attempt.
func TestRalphSuccessIsVerifyPass(t *testing.T) {
	r := FromEvents([]record.Event{
		ev(record.AgentStart, "ralph", "", 0, 0, 0), ev(record.AgentEnd, "ralph", "", 0.3, 0, 0),
		{Run: "r1", Event: record.Verify, Gate: "verify", Pass: record.Bool(false)},
		ev(record.AgentStart, "ralph", "", 0, 0, 0), ev(record.AgentEnd, "ralph", "", 0.3, 0, 0),
		{Run: "r1", Event: record.Verify, Gate: "verify", Pass: record.Bool(true)},
		{Run: "r1", Event: record.Verify, Gate: "cycle", Pass: record.Bool(true)},
		{Run: "r1", Event: record.Verify, Gate: "objective", Pass: record.Bool(true)},
	})
	if r.Passed != 1 {
		t.Fatalf("passed = %d, want 1", r.Passed)
	}
	near(t, "cost per passed task", r.CostPerPassedTask, 0.6)
}

// Retried tries (rate limit, API error) cost money too; they are counted as
// retries of the run, under the backend and model of its start.
func TestRetriesCountAndInheritModel(t *testing.T) {
	r := FromEvents([]record.Event{
		ev(record.AgentStart, "build", "T-001", 0, 0, 0),
		{Run: "r1", Event: record.AgentRetry, Phase: "build", Task: "T-001", CostUSD: 0.1, Status: "api_error"},
		ev(record.AgentEnd, "build", "T-001", 0.2, 10, 1),
	})
	if math.Abs(r.Total.CostUSD-0.3) > 1e-9 || r.Total.Runs != 1 || r.Total.Retries != 1 {
		t.Fatalf("total = %+v", r.Total)
	}
	if len(r.ByModel) != 1 || r.ByModel[0].Key != "sonnet" || r.ByModel[0].Retries != 1 {
		t.Fatalf("by model = %+v", r.ByModel)
	}
	near(t, "cost per attempt", r.CostPerAttempt, 0.3)
	if r.Attempts != 1 {
		t.Fatalf("a retry is not another attempt: attempts = %d", r.Attempts)
	}
}

// A run that started but never ended (a crash) is reported as unfinished.
func TestUnfinished(t *testing.T) {
	r := FromEvents([]record.Event{ev(record.AgentStart, "build", "T-001", 0, 0, 0)})
	if r.Unfinished != 1 || r.Attempts != 1 {
		t.Fatalf("unfinished %d attempts %d", r.Unfinished, r.Attempts)
	}
}

// FromDir reads every record file of a directory, across restarts, and
// skips a torn last line.
func TestFromDirAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.jsonl", `{"v":1,"run":"a","event":"loop_start"}
{"v":1,"run":"a","event":"agent_start","phase":"build","task":"T-001","backend":"command"}
{"v":1,"run":"a","event":"agent_end","phase":"build","task":"T-001","backend":"command","cost_usd":0.5,"input_tokens":100}
`)
	write("b.jsonl", `{"v":1,"run":"b","event":"loop_start","resumed":true}
{"v":1,"run":"b","event":"agent_start","phase":"build","task":"T-001","backend":"command"}
{"v":1,"run":"b","event":"agent_end","phase":"build","task":"T-001","backend":"command","cost_usd":0.5,"input_tokens":100}
{"v":1,"run":"b","event":"task_passed","task":"T-001"}
{"v":1,"run":"b","event":"agent_e`)
	r, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Invocations != 2 || r.Attempts != 2 || r.Passed != 1 || r.Total.InputTokens != 200 {
		t.Fatalf("report = %+v", r)
	}
	near(t, "cost per passed task", r.CostPerPassedTask, 1.0)
	if r.ByBackend[0].Key != "command" || r.ByModel[0].Key != none {
		t.Fatalf("backend %+v model %+v", r.ByBackend, r.ByModel)
	}
}
