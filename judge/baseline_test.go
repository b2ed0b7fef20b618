package judge

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Under verify_baseline: new-only, the baseline's failures of the cycle
// gate's own checks are apart and labelled; the checks that decide DONE
// (the objective's, a check in both lists, ralph's verify) stay the work's.
func TestSplitBaseline(t *testing.T) {
	rs := []CheckResult{
		{Check: record.Check{Command: "sh legacy.sh", ExitCode: 1}, Lines: []string{"FAIL: TestLegacy"}},
		{Check: record.Check{Command: "go test ./...", ExitCode: 1}, Lines: []string{"FAIL: TestNew"}},
		{Check: record.Check{Command: "go vet ./...", Pass: true}},
	}
	for i := range rs {
		rs[i].Signal = strings.Join(rs[i].Lines, "\n")
	}
	signals := BaselineSignals(rs)
	if len(signals) != 2 {
		t.Fatalf("signals %v", signals)
	}
	l := &spec.Loop{Verify: []string{"sh legacy.sh", "go test ./...", "go vet ./..."}, ObjectiveVerify: []string{"go test ./..."}, VerifyBaseline: "new-only"}
	target, before := SplitBaseline(l, signals)
	if !strings.Contains(target, "TestNew") || strings.Contains(target, "TestLegacy") {
		t.Errorf("target %q", target)
	}
	if !strings.Contains(before, "$ sh legacy.sh   # exit 1\nFAIL: TestLegacy") || strings.Contains(before, "TestNew") {
		t.Errorf("before %q", before)
	}
	for _, c := range []struct {
		shape, base string
		excused     bool
	}{{"", "all", false}, {spec.ShapeRalph, "new-only", false}, {spec.ShapeReview, "new-only", true}} {
		l2 := *l
		l2.Shape, l2.VerifyBaseline = c.shape, c.base
		_, b := SplitBaseline(&l2, signals)
		if (b != "") != c.excused || ExcusedBefore(&l2, "sh legacy.sh") != c.excused {
			t.Errorf("shape %q %s: before %q", c.shape, c.base, b)
		}
	}
}
