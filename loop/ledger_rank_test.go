package loop

import (
	"testing"

	"github.com/looprinter/looprinter/testcount"
)

// The best state is ranked by passing tests first (the ratchet's counts),
// then checks passed: a later commit where as many checks pass but fewer
// tests do is not the best state, and of equals the latest is.
func TestLedgerBestByPassingTests(t *testing.T) {
	led := Ledger{Checkpoints: []Checkpoint{
		{Commit: "more-tests", Checks: map[string]bool{"a": true, "b": false}, Tests: map[string]int{"a": 10, "b": 3}},
		{Commit: "dropped", Checks: map[string]bool{"a": true, "b": false}, Tests: map[string]int{"a": 8, "b": 3}},
	}}
	if best, _ := led.Best(); best.Commit != "more-tests" {
		t.Fatalf("Best = %q; want more-tests (13 passing tests over 11)", best.Commit)
	}
	led.Checkpoints = append(led.Checkpoints, Checkpoint{Commit: "checks", Checks: map[string]bool{"a": true, "b": true}, Tests: map[string]int{"a": 10, "b": 3}})
	if best, _ := led.Best(); best.Commit != "checks" {
		t.Fatalf("Best = %q; want checks (as many tests, more checks)", best.Commit)
	}
	led.Checkpoints = append(led.Checkpoints, Checkpoint{Commit: "equal", Checks: map[string]bool{"a": true, "b": true}, Tests: map[string]int{"a": 10, "b": 3}})
	if best, _ := led.Best(); best.Commit != "equal" {
		t.Fatalf("Best = %q; want the latest of equals", best.Commit)
	}
	led.Checkpoints = append(led.Checkpoints, Checkpoint{Commit: "fewer", Checks: map[string]bool{"a": true, "b": true, "c": true}, Tests: map[string]int{"a": 10}})
	if best, _ := led.Best(); best.Commit != "equal" {
		t.Fatalf("Best = %q; more checks do not make up for fewer passing tests", best.Commit)
	}
}

// noteTests keeps a check's count only where its output showed one.
func TestNoteTests(t *testing.T) {
	tests := keptTests(map[string]int{"old": 4})
	var known, unknown CheckResult
	known.Command, known.Tests = "go test", testcount.Counts{Known: true, Passed: 7}
	unknown.Command = "old"
	noteTests(tests, known)
	noteTests(tests, unknown)
	if tests["go test"] != 7 || tests["old"] != 4 || len(tests) != 2 {
		t.Fatalf("tests = %v", tests)
	}
	c := Checkpoint{Tests: tests}
	if c.PassingTests() != 11 {
		t.Fatalf("PassingTests = %d", c.PassingTests())
	}
}
