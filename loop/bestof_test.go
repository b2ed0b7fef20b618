package loop

import (
	"encoding/json"
	"github.com/looprinter/looprinter/wave"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

func TestPickBest(t *testing.T) {
	pass := func(i, lines, files int) wave.Attempt {
		return wave.Attempt{Index: i, Pass: true, Change: wave.Change{Lines: lines, Files: files}}
	}
	fail := func(i, lines int) wave.Attempt {
		return wave.Attempt{Index: i, Change: wave.Change{Lines: lines, Files: 1}}
	}
	cases := []struct {
		name     string
		attempts []wave.Attempt
		want     int
		ok       bool
	}{
		{"none", nil, -1, false},
		{"none passing", []wave.Attempt{fail(0, 1), fail(1, 2)}, -1, false},
		{"the only passing one", []wave.Attempt{fail(0, 1), pass(1, 90, 3), fail(2, 0)}, 1, true},
		{"fewest lines", []wave.Attempt{pass(0, 40, 1), pass(1, 12, 4), pass(2, 30, 1)}, 1, true},
		{"a smaller failing one does not count", []wave.Attempt{fail(0, 1), pass(1, 50, 2), pass(2, 20, 2)}, 2, true},
		{"same lines: fewer files", []wave.Attempt{pass(0, 10, 3), pass(1, 10, 2), pass(2, 10, 4)}, 1, true},
		{"same lines and files: lowest index", []wave.Attempt{pass(2, 10, 2), pass(0, 10, 2), pass(1, 10, 2)}, 1, true},
		{"an empty change passing", []wave.Attempt{pass(0, 5, 1), pass(1, 0, 0)}, 1, true},
	}
	for _, c := range cases {
		got, ok := wave.PickBest(c.attempts)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: pickBest = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestAttemptsFor(t *testing.T) {
	l := &spec.Loop{}
	if n := attemptsFor(l, Task{ID: "T-001"}, 3, 3); n != 1 {
		t.Errorf("no attempts, no retry: %d", n)
	}
	if n := attemptsFor(l, Task{ID: "T-001", Attempts: 4}, 0, 0); n != 4 {
		t.Errorf("plan's attempts from the first run: %d", n)
	}
	l.Retry = spec.Retry{BestOf: 3, After: spec.RetryAfterFailed}
	for _, c := range []struct{ attempts, failed, same, want int }{{0, 0, 0, 1}, {0, 1, 1, 3}, {5, 1, 1, 5}, {2, 1, 1, 3}} {
		if n := attemptsFor(l, Task{ID: "T-001", Attempts: c.attempts}, c.failed, c.same); n != c.want {
			t.Errorf("attempts %d, failed %d: %d, want %d", c.attempts, c.failed, n, c.want)
		}
	}
	l.Retry.After = spec.RetryAfterSameFailure
	if n := attemptsFor(l, Task{ID: "T-001"}, 1, 1); n != 1 {
		t.Errorf("same_failure after one failure: %d", n)
	}
	if n := attemptsFor(l, Task{ID: "T-001"}, 2, 2); n != 3 {
		t.Errorf("same_failure after the same failure twice: %d", n)
	}
}

// Every attempt's failure lands in one text, each under its own heading;
// fenced for the prompt it stays one block, whatever an attempt printed.
func TestBestOfFailure(t *testing.T) {
	got := wave.Failure("T-002", []wave.Attempt{
		{Index: 0, Agent: spec.Agent{Backend: "claude", Model: "opus"}, Signal: "$ go test ./...   # exit 1\n--- FAIL: TestA\n"},
		{Index: 1, Agent: spec.Agent{Backend: "codex", Model: "gpt-5"}, Signal: "~~~\nbreak out\n~~~"},
		{Index: 2},
	})
	for _, want := range []string{
		"3 attempts of T-002 ran at once; none passed.",
		"## attempt 1 (claude/opus)\n$ go test ./...   # exit 1\n--- FAIL: TestA\n\n## attempt 2 (codex/gpt-5)\n",
		"## attempt 3\n(the checks failed without output)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the failure text lacks %q:\n%s", want, got)
		}
	}
	block := fence("output of the checks on the last attempt", got)
	if strings.Count(block, "~~~") != 2 || !strings.HasPrefix(block, "~~~text\n") || !strings.HasSuffix(block, "\n~~~") {
		t.Errorf("not one fenced block:\n%s", block)
	}
	// Bounded: ten attempts of long output share the room.
	var many []wave.Attempt
	for i := 0; i < 10; i++ {
		many = append(many, wave.Attempt{Index: i, Signal: strings.Repeat("FAIL: a long line of output\n", 2000)})
	}
	long := wave.Failure("T-001", many)
	if len(long) > wave.MaxAttemptsFailure+2000 || strings.Count(long, "## attempt") != 10 || !strings.Contains(long, "more bytes of this attempt's output left out") {
		t.Errorf("ten long failures: %d bytes, %d headings", len(long), strings.Count(long, "## attempt"))
	}
	if wave.Failure("T-001", nil) != "" {
		t.Error("no attempts, yet a failure text")
	}
}

func TestPlanAttempts(t *testing.T) {
	plan := func(v any) []byte {
		m := map[string]any{"id": "T-001", "title": "t", "description": "d", "targetFile": "f.txt", "passes": false, "notes": ""}
		if v != nil {
			m["attempts"] = v
		}
		b, _ := json.Marshal(map[string]any{"tasks": []any{m}})
		return b
	}
	p, errs := CheckPlan(plan(3))
	if len(errs) > 0 || p.Tasks[0].Attempts != 3 {
		t.Fatalf("attempts 3: %v %+v", errs, p)
	}
	if p, errs := CheckPlan(plan(nil)); len(errs) > 0 || p.Tasks[0].Attempts != 0 {
		t.Fatalf("no attempts: %v", errs)
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{0, `task 1 (T-001): "attempts" is 0; a task may be tried 1 to 10 times at once`},
		{11, `task 1 (T-001): "attempts" is 11`},
		{-2, `task 1 (T-001): "attempts" is -2`},
		{2.5, `task 1 (T-001): "attempts" must be a whole number from 1 to 10`},
		{"3", `task 1 (T-001): "attempts" must be a whole number from 1 to 10 (the tries of the task run at once), got "3"`},
	} {
		_, errs := CheckPlan(plan(c.v))
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("attempts %v: errors %q, want %q", c.v, errs, c.want)
		}
	}
	// Fixed when planned: a build run that raises it changes the plan.
	j := &Plan{Tasks: []Task{{ID: "T-001", TargetFile: "a", Attempts: 2}}}
	cur := clonePlan(j)
	cur.Tasks[0].Attempts = 10
	if s, _ := planDiffs(j, cur, "T-001"); len(s) != 1 || !strings.Contains(s[0], "T-001's attempts was changed from 2 to 10") {
		t.Errorf("raised attempts: %v", s)
	}
	out, err := Render(Builtin("plan"), PromptData{Phase: "plan", Objective: "o", Schema: PlanSchema})
	if err != nil || !strings.Contains(out, `"attempts"`) || !strings.Contains(out, "keeps the passing try with the smallest change") {
		t.Errorf("the plan prompt does not explain attempts: %v\n%s", err, out)
	}
}

func TestAttemptEvent(t *testing.T) {
	a := wave.Attempt{Index: 1, Agent: spec.Agent{Backend: "claude", Model: "opus"}, Pass: true, Change: wave.Change{Lines: 12, Files: 2}, Ref: "refs/looprinter/demo/best-of/T-002/7-2"}
	ev := wave.AttemptEvent("T-002", 3, a, true)
	if ev.Event != record.AttemptJudged || ev.Task != "T-002" || ev.Attempt != 2 || ev.Backend != "claude" || ev.Model != "opus" || ev.Pass == nil || !*ev.Pass ||
		ev.Kind != "kept" || ev.Ref != a.Ref || ev.BestOf == nil || *ev.BestOf != (record.BestOf{Of: 3, Lines: 12, Files: 2}) {
		t.Fatalf("%+v", ev)
	}
	if want := "T-002 attempt 2 of 3 (claude/opus): passed, kept; 12 lines in 2 files; on refs/looprinter/demo/best-of/T-002/7-2"; ev.Message != want || record.Describe(ev) != "best of: "+want {
		t.Errorf("message %q, line %q", ev.Message, record.Describe(ev))
	}
	if ev := wave.AttemptEvent("T-002", 3, a, false); ev.Kind != "passed" || !strings.Contains(ev.Message, "passed, not kept") {
		t.Errorf("a passing attempt not kept: %+v", ev)
	}
	a.Pass, a.Signal = false, "$ sh check.sh   # exit 1"
	if ev := wave.AttemptEvent("T-002", 3, a, false); ev.Kind != "failed" || *ev.Pass || ev.FailureSignal != a.Signal || !strings.Contains(ev.Message, "): failed;") {
		t.Errorf("a failing attempt: %+v", ev)
	}
	// The record survives its file: written and read back whole.
	data, err := json.Marshal(ev)
	if err != nil || !strings.Contains(string(data), `"event":"attempt_judged"`) || !strings.Contains(string(data), `"best_of":{"of":3,"lines":12,"files":2}`) {
		t.Errorf("%s %v", data, err)
	}
}
