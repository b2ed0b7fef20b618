package loop

import (
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
