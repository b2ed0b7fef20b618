package ops

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

// A check that failed on a path outside its view: the console line names
// the path and the field of loop.yaml; a check that failed otherwise adds
// nothing.
func TestDescribeViewHint(t *testing.T) {
	hint := "/opt/data is outside the sandbox's view; add it to sandbox.allow_read in loop.yaml"
	e := record.Event{Event: record.Baseline, Pass: record.Bool(false), Checks: []record.Check{{Command: "sh check.sh", ExitCode: 1, Signal: "cat: /opt/data: No such file or directory\n" + hint}}}
	if d := Describe(e); !strings.HasSuffix(d, "(exit 1) — "+hint) {
		t.Errorf("baseline: %q", d)
	}
	e = record.Event{Event: record.Verify, Gate: "cycle", Pass: record.Bool(false), FailureSignal: "FAIL: TestX\n" + hint}
	if d := Describe(e); !strings.HasSuffix(d, " — "+hint) {
		t.Errorf("verify: %q", d)
	}
	e.FailureSignal = "FAIL: TestX"
	if d := Describe(e); strings.Contains(d, "outside") {
		t.Errorf("no hint: %q", d)
	}
}
