package judge

import (
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// childrenCPU is the CPU of this process's children it reaped so far
// (getrusage RUSAGE_CHILDREN): the process tree's figure, which misses a
// process that left the tree (a double-forked daemon, one in a PID
// namespace or a box's server that the engine does not reap per check).
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

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
