package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/safegit"
)

// BenchmarkStrengthPlan measures what a verify_strength pass costs before
// any check runs (the changed lines from git, the mutants of them) in a Go
// checkout of N files with a 20-line change in one of them: it must grow
// with the change, not the checkout. The checks' own time is the user's
// (one run of the gate's checks per mutant, at most max_mutants).
func BenchmarkStrengthPlan(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := 0; i < n; i++ {
				p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("f%05d.go", i))
				os.MkdirAll(filepath.Dir(p), 0o755)
				src := fmt.Sprintf("package pkg%03d\n\nfunc F%d(a, b int) int {\n\tif a < b {\n\t\treturn a\n\t}\n\treturn b\n}\n", i/100, i)
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			gitIn(b, dir, "init", "-q")
			gitIn(b, dir, "add", "-A")
			gitIn(b, dir, "commit", "-qm", "init")
			ctx := context.Background()
			base, err := safegit.SnapshotTree(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			// 20 changed lines in one file.
			var body strings.Builder
			body.WriteString("package pkg000\n\nfunc F0(a, b int) int {\n")
			for k := 0; k < 18; k++ {
				fmt.Fprintf(&body, "\tif a > %d && b < %d {\n", k, k+1)
			}
			body.WriteString("\treturn b\n}\n")
			src := body.String()
			src = strings.ReplaceAll(src, "{\n\tif", "{\n\tif") // one statement per line
			lines := strings.Split(src, "\n")
			var out []string
			for _, l := range lines {
				if strings.HasPrefix(l, "\tif ") {
					l += " return a }"
				}
				out = append(out, l)
			}
			if err := os.WriteFile(filepath.Join(dir, "pkg000", "f00000.go"), []byte(strings.Join(out, "\n")), 0o644); err != nil {
				b.Fatal(err)
			}
			paths := []string{"pkg000/f00000.go"}
			if os.Getenv("STRENGTH_BENCH_WHOLE") != "" {
				paths = nil // the whole tree compared, for the docs' figures
			}
			b.ResetTimer()
			for b.Loop() {
				changed, err := ChangedLines(ctx, dir, base, paths)
				if err != nil {
					b.Fatal(err)
				}
				ms, _, lines, err := StrengthMutants(dir, changed, nil, 40)
				if err != nil || len(ms) == 0 || lines < 18 {
					b.Fatalf("%d mutants of %d lines: %v", len(ms), lines, err)
				}
			}
		})
	}
}
