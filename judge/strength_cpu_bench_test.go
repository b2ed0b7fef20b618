package judge

import (
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// reportMutantCPU reports the CPU per mutant of the benchmark's passes:
// the pass's record's (each check's cgroup, or its box's: cpu-ms/mutant)
// against the process tree's (tree-cpu-ms/mutant, over b.N passes), the
// control's run included in both.
func reportMutantCPU(b *testing.B, last *record.Strength, tree time.Duration) {
	n := float64(last.Mutants)
	b.ReportMetric(float64(last.CPUMS)/n, "cpu-ms/mutant")
	if b.N > 0 {
		b.ReportMetric(float64(tree.Milliseconds())/float64(b.N)/n, "tree-cpu-ms/mutant")
	}
	b.Logf("the pass's checks' CPU from %q: %d ms for %d mutants (the control's run included); the process tree's: %s over %d passes", last.CPUFrom, last.CPUMS, last.Mutants, tree, b.N)
}
