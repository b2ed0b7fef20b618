package failover

import (
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// A task escalates after N failed tries even when each failure differs,
// after N same failures, holds its step while it fails, and the next task
// starts on the base agent (a record of kind back).
func TestEscalateByTriesAndBack(t *testing.T) {
	r, evs := failoverRunner(t)
	base := spec.Agent{Backend: "command", Model: "small", Command: "/bin/true",
		Escalate: []spec.Escalation{{After: 2, Model: "mid"}, {After: 3, Backend: "codex", Model: "gpt-5"}}}
	run := func(task string) string { return agentKey(r.escalate("build", task, base, base)) }
	for i, want := range []string{"command/small", "command/small", "command/mid", "codex/gpt-5", "codex/gpt-5"} {
		if got := run("T-004"); got != want {
			t.Fatalf("T-004 run %d on %s, want %s", i+1, got, want)
		}
	}
	if got := run("T-005"); got != "command/small" {
		t.Fatalf("the next task on %s, want the base agent", got)
	}
	var kinds []string
	for _, ev := range *evs {
		if ev.Event == record.Escalated {
			kinds = append(kinds, ev.Kind+":"+ev.From+">"+ev.To+":"+ev.Reason)
		}
	}
	want := []string{":command/small>command/mid:after 2 failed tries", ":command/mid>codex/gpt-5:after 3 failed tries", "back:>command/small:"}
	if len(kinds) != len(want) {
		t.Fatalf("escalated records %q, want %q", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("record %d %q, want %q", i, kinds[i], want[i])
		}
	}
	if lines := EscalationLines(r.st); len(lines) != 2 || lines[0] != "T-004 needed the stronger model command/mid after 2 failed tries" {
		t.Errorf("lines %q", lines)
	}
	// Plan and post runs never escalate.
	if got := agentKey(r.escalate("plan", "", base, base)); got != "command/small" {
		t.Errorf("plan on %s", got)
	}
}

// The same failure in a row counts within the task's runs: a streak left
// by the task before does not escalate a new one at once.
func TestEscalateSameFailures(t *testing.T) {
	r, evs := failoverRunner(t)
	base := spec.Agent{Backend: "command", Model: "small", Command: "/bin/true", Escalate: []spec.Escalation{{After: 2, Model: "big"}}}
	r.st.SameCount = 5
	if got := agentKey(r.escalate("ralph", "", base, base)); got != "command/small" {
		t.Fatalf("first attempt on %s", got)
	}
	r.st.SameCount = 1
	r.escalate("ralph", "", base, base)
	r.st.SameCount = 2
	if got := agentKey(r.escalate("ralph", "", base, base)); got != "command/big" {
		t.Fatalf("third attempt on %s, want command/big", got)
	}
	last := (*evs)[len(*evs)-1]
	if last.Event != record.Escalated || last.Reason != "after 2 same failures" {
		t.Errorf("record %+v", last)
	}
}

// In the review shape, a fixer escalated to the reviewer's model moves the
// reviewer to the fixer's base model: never the model under review.
func TestEscalatedFixerKeepsReviewerOff(t *testing.T) {
	r, evs := failoverRunner(t) // writer and fixer on command/a, reviewer command/b
	fixer := r.spec().AgentFor("fixer", false)
	fixer.Escalate = []spec.Escalation{{After: 1, Model: "b"}}
	r.escalate("fixer", "round-1", fixer, fixer)
	if got := agentKey(r.escalate("fixer", "round-2", fixer, fixer)); got != "command/b" {
		t.Fatalf("second fixer run on %s, want command/b", got)
	}
	rev := r.spec().AgentFor("reviewer", false)
	got := r.escalate("reviewer", "", rev, rev)
	if agentKey(got) != "command/a" {
		t.Fatalf("reviewer on %s, want command/a (off the escalated fixer's command/b)", agentKey(got))
	}
	last := (*evs)[len(*evs)-1]
	if last.Kind != "reviewer" || last.To != "command/a" {
		t.Errorf("record %+v", last)
	}
}
