package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

// A planner cannot pass a task: a plan that comes with passes: true has
// the mark taken back and a plan_marks warning names the task; a plan
// without marks gets no warning.
func TestJudgedPlanMarksTakenBack(t *testing.T) {
	for _, c := range []struct {
		plan, warn string
	}{
		{"plan T-001:a.txt:true T-002:b.txt", "T-001 marked passes: true"},
		{"plan T-001:a.txt T-002:b.txt", ""},
	} {
		files := map[string]string{
			"loop.yaml": "objective: \"a.txt and b.txt exist\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\", \"test -s b.txt\"]\nbudget: {iterations: 2}\n",
			"agent.txt": "== plan\n" + c.plan + "\n== build\ndo\n",
		}
		out, evs, _ := fakeLoop(t, files, nil)
		var warns []string
		for _, e := range events(evs, record.Warning) {
			if e.Kind == "plan_marks" {
				warns = append(warns, e.Message)
			}
		}
		if c.warn == "" && len(warns) != 0 || c.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], c.warn)) {
			t.Errorf("%s: plan_marks warnings %q, want %q", c.plan, warns, c.warn)
		}
		// Each task needed its own build run: T-001 was not taken as passed.
		if out.Reason != ReasonDone || out.State.Iterations != 2 {
			t.Errorf("%s: outcome %s after %d builds: %s; want done after 2", c.plan, out.Reason, out.State.Iterations, out.Summary)
		}
	}
}

// A plan's targets are judged before any build: a target through a linked
// folder that leads outside, or a file a user glob protects (existing or
// new), is refused with the task and the reason; an ordinary file is not.
// A build run that marks another task passes has the mark put back as a
// violation.
func TestJudgedTargetsAndMarks(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"loop.yaml":    "objective: \"a.txt and b.txt exist\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nprotect: [\"spec/**\"]\nverify: [\"test -s a.txt\", \"test -s b.txt\"]\nbudget: {iterations: 3}\n",
		"spec/old.txt": "old\n",
		"agent.txt": "== plan\nplan T-001:out/deep/x.txt T-002:spec/old.txt T-003:spec/new.txt T-004:a.txt\n" +
			"== replan\nplan T-001:a.txt T-002:b.txt\n" +
			"== build\ndo\nmark T-002\n== build\ndo\n",
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{})
	inv := events(evs, record.PlanInvalid)
	if len(inv) != 1 {
		t.Fatalf("plan_invalid records %+v, want one", inv)
	}
	want := []string{
		`task 1 (T-001): targetFile "out/deep/x.txt" goes through a link that leaves the loop folder`,
		`task 2 (T-002): targetFile "spec/old.txt" is protected (`,
		`task 3 (T-003): targetFile "spec/new.txt" is protected (`,
	}
	if len(inv[0].Errors) != len(want) {
		t.Fatalf("plan problems %q, want %d", inv[0].Errors, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(inv[0].Errors[i], w) {
			t.Errorf("plan problem %d %q, want it to start %q", i+1, inv[0].Errors[i], w)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("a file was written through the link")
	}
	var marks []string
	for _, v := range events(evs, record.Violation) {
		if v.Kind == "marked_other_task" {
			marks = append(marks, v.Message)
		}
	}
	if len(marks) != 1 || !strings.Contains(marks[0], "T-002 was marked passes: true, but only a judged run for T-002 may mark it") {
		t.Errorf("marked_other_task violations %q, want one for T-002's mark", marks)
	}
	if out.Reason != ReasonDone || out.State.Iterations != 3 {
		t.Errorf("outcome %s after %d builds: %s; want done after 3 (T-002 was not taken as passed)", out.Reason, out.State.Iterations, out.Summary)
	}
}
