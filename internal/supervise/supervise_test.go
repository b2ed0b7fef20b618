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

func TestJudgeAcceptsPromptsAndNewChecks(t *testing.T) {
	after := strings.Replace(base, `verify: ["go build ./...", "go test ./..."]`, `verify: ["go build ./...", "go test ./...", "go vet ./..."]`, 1) +
		"prompts:\n  build: \"Fix the failing test first.\"\n"
	r := judge(t, after)
	if len(r.Refused) != 0 {
		t.Fatalf("refused: %v", r.Refused)
	}
	joined := strings.Join(r.Changes, "\n")
	if !strings.Contains(joined, `prompts.build: "" → "Fix the failing test first."`) || !strings.Contains(joined, "go vet ./...") {
		t.Fatalf("changes: %v", r.Changes)
	}
	// Lowering a budget tightens the loop: accepted.
	r = judge(t, strings.Replace(base, "iterations: 10", "iterations: 5", 1))
	if len(r.Refused) != 0 {
		t.Fatalf("lowering a budget was refused: %v", r.Refused)
	}
}

func TestJudgeRefusesWeakenedGates(t *testing.T) {
	cases := map[string]struct{ after, want string }{
		"delete verify":    {strings.Replace(base, `, "go test ./..."`, "", 1), `removes the verify check "go test ./..."`},
		"reword verify":    {strings.Replace(base, `"go test ./..."`, `"go test ./... || true"`, 1), `removes the verify check "go test ./..."`},
		"delete objective": {strings.Replace(base, `objective_verify: ["./objective.sh"]`, "", 1), `removes the objective_verify check "./objective.sh"`},
		"empty protect":    {strings.Replace(base, `protect: ["**/*_test.go"]`, "protect: []", 1), "empties protect"},
		"protect defaults": {base + "protect_defaults: false\n", "turns protect_defaults off"},
		"raise iterations": {strings.Replace(base, "iterations: 10", "iterations: 11", 1), "raises budget.iterations"},
		"raise cost":       {strings.Replace(base, "cost_usd: 5", "cost_usd: 50", 1), "raises budget.cost_usd"},
		"raise wall":       {strings.Replace(base, "wall: 1h", "wall: 2h", 1), "raises budget.wall"},
		"change objective": {strings.Replace(base, `"tests pass"`, `"some tests pass"`, 1), "changes the objective"},
		"baseline":         {base + "verify_baseline: new-only\n", "relaxes verify_baseline to new-only"},
		"invalid file":     {base + "bogus: 1\n", "the new loop file is invalid"},
	}
	for name, c := range cases {
		r := judge(t, c.after)
		if !strings.Contains(strings.Join(r.Refused, "\n"), c.want) {
			t.Errorf("%s: refused %v, want %q", name, r.Refused, c.want)
		}
	}
	// Raising same_failure (a default) is raising a budget too.
	r := judge(t, strings.Replace(base, "wall: 1h}", "wall: 1h, same_failure: 9}", 1))
	if !strings.Contains(strings.Join(r.Refused, "\n"), "raises budget.same_failure") {
		t.Fatalf("same_failure: %v", r.Refused)
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
