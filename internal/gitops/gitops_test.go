package gitops

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

func TestMessages(t *testing.T) {
	c := &Committer{Name: "api"}
	s, body, ok := c.message(record.Event{Event: record.TaskPassed, Task: "T-003", Message: "Add the parser", Cycle: 2, Iteration: 7, File: "p.go"})
	if !ok || s != "looprinter api: T-003 built, gates not run yet — Add the parser" || !strings.Contains(body, "Build run 7 of cycle 2 marked T-003 done") || !strings.Contains(body, "Target: p.go") {
		t.Fatalf("task: %q %q", s, body)
	}
	// A task whose checks ran after its build run (git.rollback: task):
	// the subject says what they said, never "passed" when one failed.
	s, body, _ = c.message(record.Event{Event: record.TaskPassed, Task: "T-003", Message: "Add the parser",
		Checks: []record.Check{{Command: "go vet ./...", Pass: true}, {Command: "go test ./...", ExitCode: 1}}})
	if s != "looprinter api: T-003 built, 1 of 2 checks pass — Add the parser" || strings.Contains(s, "passed") || !strings.Contains(body, "go test ./...: FAIL (exit 1)") {
		t.Fatalf("task with checks: %q %q", s, body)
	}
	s, body, ok = c.message(record.Event{Event: record.Verify, Gate: "cycle", Cycle: 2, Pass: record.Bool(false),
		Checks: []record.Check{{Command: "go test ./...", ExitCode: 1}}, Errors: []string{"task T-004 is not done"}})
	if !ok || s != "looprinter api: cycle 2 cycle gate FAIL" || body != "go test ./...: FAIL (exit 1)\ntask T-004 is not done" {
		t.Fatalf("gate: %q %q", s, body)
	}
	s, _, _ = c.message(record.Event{Event: record.Verify, Gate: "objective", Cycle: 1, Pass: record.Bool(true), Message: "pass-through"})
	if s != "looprinter api: cycle 1 objective gate NOT VERIFIED (no objective checks)" {
		t.Fatal(s)
	}
	s, _, _ = c.message(record.Event{Event: record.Verify, Gate: "verify", Iteration: 3, Pass: record.Bool(true)})
	if s != "looprinter api: attempt 3 verify checks PASS" {
		t.Fatal(s)
	}
	s, body, _ = c.message(record.Event{Event: record.PostPhaseEnd, Phase: "docs", Pass: record.Bool(true), Message: "docs done after 1 step"})
	if s != "looprinter api: post phase docs done" || body != "docs done after 1 step" {
		t.Fatalf("post phase: %q %q", s, body)
	}
	for _, e := range []record.Event{{Event: record.Verify, Gate: "baseline"}, {Event: record.AgentEnd}, {Event: record.LoopStop}} {
		if _, _, ok := c.message(e); ok {
			t.Errorf("%s/%s makes a commit", e.Event, e.Gate)
		}
	}
}

func TestSubcommandAndRecords(t *testing.T) {
	if got := subcommand([]string{"-c", "user.name=x", "-c", "user.email=y", "commit", "-m", "long message"}); got != "commit" {
		t.Fatal(got)
	}
	if got := subcommand([]string{"worktree", "add", "-b", "b", "/p"}); got != "worktree add" {
		t.Fatal(got)
	}
	st := "?? working-records/\n M src/a.go\n?? sub/working-records/\n?? working-records"
	if got := dropRecords(st); got != " M src/a.go" {
		t.Fatalf("%q", got)
	}
}

func TestRelativePathURL(t *testing.T) {
	for url, want := range map[string]bool{
		"../remote.git": true, "remote.git": true, "sub/dir": true,
		"/srv/git/r.git": false, "https://example.com/r.git": false, "file:///srv/r.git": false,
		"git@example.com:o/r.git": false, "host:path": false, "": false,
	} {
		if got := relativePathURL(url); got != want {
			t.Errorf("relativePathURL(%q) = %v, want %v", url, got, want)
		}
	}
}
