package judge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// BenchmarkStrengthPass20Lines measures a whole verify_strength pass on a
// 20-line change under the default sandbox (bubblewrap with a view per
// mutant where layers work): a Python module of 20 changed lines with a
// unittest suite of the loop's start, its check `python3 -m unittest -v`,
// the default number of mutants and workers (STRENGTH_BENCH_SANDBOX=off:
// the same pass unconfined). It reports the mutants made
// and judged and the pass's wall time per mutant; the wall time per op is
// the whole pass. The checks' own time is most of it: one run of the
// gate's checks per mutant.
func BenchmarkStrengthPass20Lines(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("no python3")
	}
	mode := "auto"
	if m := os.Getenv("STRENGTH_BENCH_SANDBOX"); m != "" {
		mode = m // off, for the same pass unconfined
	}
	kind, err := sandbox.Resolve(mode)
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	var base, done, tests strings.Builder
	base.WriteString("def grade(x):\n    raise NotImplementedError\n")
	done.WriteString("def grade(x):\n")
	tests.WriteString("import unittest\nimport calc\n\n\nclass TestGrade(unittest.TestCase):\n")
	for k := 0; k < 19; k++ {
		fmt.Fprintf(&done, "    if x < %d:\n        return %d\n", 10*(k+1), k)
		fmt.Fprintf(&tests, "    def test_band_%02d(self):\n        self.assertEqual(calc.grade(%d), %d)\n        self.assertEqual(calc.grade(%d), %d)\n\n", k, 10*k, k, 10*k+9, k)
	}
	done.WriteString("    return 19\n")
	tests.WriteString("\nif __name__ == '__main__':\n    unittest.main()\n")
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("calc.py", base.String())
	write("test_calc.py", tests.String())
	gitIn(b, dir, "init", "-q")
	gitIn(b, dir, "add", "-A")
	gitIn(b, dir, "commit", "-qm", "start")
	ctx := context.Background()
	start, err := safegit.SnapshotTree(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	write("calc.py", done.String())
	check := "python3 -m unittest -v"
	l := &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute), Sandbox: kind}
	var last *record.Strength
	j := &Judge{Dir: dir, Priv: b.TempDir(), Spec: func() *spec.Loop { return l },
		Emit:  func(ev record.Event) { last = ev.Strength },
		Stamp: func() (int, int) { return 1, 1 }}
	tree0 := childrenCPU()
	b.ResetTimer()
	for b.Loop() {
		s := j.Strength(ctx, StrengthOptions{Base: start, Cmds: []string{check}, Kind: kind, Paths: []string{"calc.py"}})
		if s.Error != "" || s.Lines < 20 || s.Caught == 0 {
			b.Fatalf("strength pass: %+v", s)
		}
	}
	b.StopTimer()
	tree := childrenCPU() - tree0
	if last != nil && last.Mutants > 0 {
		b.ReportMetric(float64(last.Mutants), "mutants")
		b.ReportMetric(float64(last.Caught), "caught")
		b.ReportMetric(float64(last.DurationMS)/float64(last.Mutants), "ms/mutant")
		reportMutantCPU(b, last, tree)
	}
	b.Logf("sandbox %s, mode %s", kind, last.Mode)
}
