package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
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

// What a build run changes in plan.json beyond its own task's mark is put
// back: another task's mark alone is set back with everything else the
// agent wrote kept (notes); a changed target puts the judged plan back
// whole.
func TestJudgedPlanPutBack(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt and b.txt exist\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt\", \"test -s b.txt\"]\nbudget: {iterations: 4}\n",
		"agent.txt": "== plan\nplan T-001:a.txt T-002:b.txt\n" +
			"== build\ndo\nmark T-002\nrun sed -i 's/\"notes\": \"\"/\"notes\": \"kept\"/' output/plan.json\n" +
			"== build\nrun cp output/plan.json seen.json\nrun sed -i 's/\"b.txt\"/\"c.txt\"/' output/plan.json\nwrite c.txt x\n" +
			"== build\ndo\n",
	}
	out, evs, dir := fakeLoop(t, files, nil)
	// A run with a violation is a failed attempt: the second build is
	// T-001's again.
	var kinds []string
	for _, v := range events(evs, record.Violation) {
		kinds = append(kinds, v.Kind+" "+v.Task)
	}
	if strings.Join(kinds, ", ") != "marked_other_task T-002, plan_changed T-001" {
		t.Errorf("violations %q, want T-002's mark, then the target changed by T-001's run", kinds)
	}
	seen := readFile(t, filepath.Join(dir, "seen.json"))
	if !strings.Contains(seen, `"notes": "kept"`) || strings.Contains(seen, `"passes": true,
      "targetFile": "b.txt"`) {
		t.Errorf("plan.json after the mark was set back:\n%s\nwant T-002 open and the agent's notes kept", seen)
	}
	plan := readFile(t, loopdir.Dir(dir).Plan())
	if strings.Contains(plan, "c.txt") || !strings.Contains(plan, `"targetFile": "b.txt"`) {
		t.Errorf("plan.json at the end:\n%s\nwant T-002's target b.txt put back", plan)
	}
	if out.Reason != ReasonDone || out.State.Iterations != 4 {
		t.Errorf("outcome %s after %d builds: %s; want done after 4", out.Reason, out.State.Iterations, out.Summary)
	}
}

// A change to plan.json made between runs (here by hand, as T-001 passes)
// is put back before the next run starts, and reported.
func TestJudgedPlanPutBackBetweenRuns(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt and b.txt exist\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt && test -s b.txt\"]\nbudget: {iterations: 3}\n",
		"agent.txt": "== plan\nplan T-001:a.txt T-002:b.txt\n== build\nrun cp output/plan.json seen-$(ls seen-* 2>/dev/null | wc -l).json\ndo\n",
	}
	byHand := func(e record.Event) {
		if e.Event == record.TaskPassed && e.Task == "T-001" {
			p := loopdir.Dir(dir).Plan()
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.ReplaceAll(string(b), `"passes": false`, `"passes": true`)), 0o644)
		}
	}
	out, evs, _ := fakeLoopIn(t, dir, files, nil, Options{Subscribers: []func(record.Event){byHand}})
	var changed []string
	for _, v := range events(evs, record.Violation) {
		if v.Kind == "plan_changed" {
			changed = append(changed, v.Message)
		}
	}
	if len(changed) != 1 || !strings.Contains(changed[0], "a change made between runs: T-002 was marked passes: true") {
		t.Errorf("plan_changed violations %q, want T-002's mark made between runs", changed)
	}
	if seen := readFile(t, filepath.Join(dir, "seen-1.json")); strings.Count(seen, `"passes": true`) != 1 {
		t.Errorf("plan.json as the second build run found it:\n%s\nwant only T-001 passed", seen)
	}
	if out.Reason != ReasonDone || out.State.Iterations != 2 {
		t.Errorf("outcome %s after %d builds: %s; want done after 2", out.Reason, out.State.Iterations, out.Summary)
	}
}

// A plan.json a run leaves broken (a task without its title), though its
// ids, targets and marks are as judged, is written back whole before the
// next run.
func TestJudgedBrokenPlanWrittenBack(t *testing.T) {
	files := map[string]string{
		"loop.yaml": "objective: \"a.txt and b.txt exist\"\nsandbox: off\nagent: {backend: command, command: AGENT}\nverify: [\"test -s a.txt && test -s b.txt\"]\nbudget: {iterations: 4}\n",
		"agent.txt": "== plan\nplan T-001:a.txt T-002:b.txt\n" +
			"== build\nrun sed -i 's/\"title\": \"Write b.txt\"/\"title\": \"\"/' output/plan.json\n" +
			"== build\nrun cp output/plan.json seen.json\ndo\n",
	}
	out, _, dir := fakeLoop(t, files, nil)
	if seen := readFile(t, filepath.Join(dir, "seen.json")); !strings.Contains(seen, `"title": "Write b.txt"`) {
		t.Errorf("plan.json as the next run found it:\n%s\nwant T-002's title back", seen)
	}
	if out.Reason != ReasonDone {
		t.Errorf("outcome %s: %s; want done", out.Reason, out.Summary)
	}
}
