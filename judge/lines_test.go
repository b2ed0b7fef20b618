package judge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

func TestNoteFlakyKeepsEachTestOnceSorted(t *testing.T) {
	f := NoteFlaky(nil, "go test ./...", []string{"TestB", "TestA"})
	f = NoteFlaky(f, "go test ./...", []string{"TestA", "TestC"})
	f = NoteFlaky(f, "make check", nil)
	want := FlakyTests{"go test ./...": {"TestA", "TestB", "TestC"}, "make check": nil}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("flaky = %v, want %v", f, want)
	}
	lines := FlakyLines(f)
	wantLines := []string{"`go test ./...` (tests that flipped: TestA, TestB, TestC)", "`make check` (no test named in its output)"}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Fatalf("lines = %q, want %q", lines, wantLines)
	}
	if FlakyLines(nil) != nil {
		t.Fatal("no flaky check: no line")
	}
}

func TestStrengthLinesAndSurvivorsAreCut(t *testing.T) {
	s := &record.Strength{Mutants: 4, Caught: 1, Score: 0.25, Survivors: []record.Survivor{
		{File: "a.go", Line: 1, Mutation: "x"}, {File: "b.go", Line: 2, Mutation: "y"}, {File: "c.go", Line: 3, Mutation: "z"}}}
	lines := StrengthLines(s, 2)
	if len(lines) != 4 || lines[0] != record.StrengthLine(s) || lines[1] != "survived: a.go:1:0: x" || lines[3] != "… and 1 more survivors" {
		t.Fatalf("lines = %q", lines)
	}
	if got := SurvivorList(s, 2); got != "a.go:1:0: x; b.go:2:0: y; … and 1 more" {
		t.Fatalf("survivors = %q", got)
	}
	if StrengthLines(nil, 3) != nil {
		t.Fatal("no pass: no line")
	}
}

func TestGateEvidenceNeverListsAPassOfARefusedGate(t *testing.T) {
	rs := []CheckResult{{Check: record.Check{Command: "go test", ExitCode: 0, Pass: true, DurationMS: 7}}}
	if got := GateEvidence("verify", rs, nil, true, "x"); !reflect.DeepEqual(got, Evidence("verify", rs, nil)) {
		t.Fatalf("a passed gate's evidence = %q", got)
	}
	got := GateEvidence("verify", rs, nil, false, "")
	if len(got) != 2 || got[0] != "verify gate: FAIL: the done verdict refused it" || !strings.Contains(got[1], "not a pass: the gate FAILED (7ms)") {
		t.Fatalf("a refused gate's evidence = %q", got)
	}
	if got := GateEvidence("verify", rs, nil, false, "clean room: FAIL"); got[0] != "verify gate: FAIL: clean room: FAIL" {
		t.Fatalf("first line = %q", got[0])
	}
}
