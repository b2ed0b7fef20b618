//go:build linux

package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// engineCPU is this process's CPU (getrusage self): the engine's own.
func engineCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCheckCPU runs a gate of 6 trivial checks through Check (`true`,
// and a small `go test -v`-like output, passing and failing) under
// `sandbox: off` and under the default sandbox, interleaved, and reports
// the median engine CPU (this process's alone) per check of each.
func BenchmarkCheckCPU(b *testing.B) {
	const checks = 6
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.21\n"), 0o644)
	var goOut strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&goOut, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
	}
	goOut.WriteString("=== RUN   TestBad\n    x_test.go:9: want 1, got 2\n--- FAIL: TestBad (0.00s)\nFAIL\nFAIL\tm\t0.002s\n")
	os.WriteFile(filepath.Join(dir, "out.txt"), []byte(goOut.String()), 0o644)
	logs := b.TempDir()
	env := append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	red := redact.New(env, nil, nil)
	cases := map[string][]string{
		"true":   {"true"},
		"gotest": {"cat out.txt"},
		"gofail": {"cat out.txt; exit 1"},
	}
	kinds := []string{"off", "auto"}
	if _, err := sandbox.Resolve(sandbox.Bwrap); err != nil {
		kinds = kinds[:1]
	}
	per := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for name, cmd := range cases {
			for _, k := range kinds {
				l := &spec.Loop{Dir: dir, CheckTimeout: spec.Duration(time.Minute), Sandbox: k}
				cmds := make([]string, checks)
				for j := range cmds {
					cmds[j] = cmd[0]
				}
				e0 := engineCPU()
				res := Check(context.Background(), CheckRequest{Loop: l, Cmds: cmds, Env: env, Redactor: red,
					LogPath: func(i int) string { return filepath.Join(logs, fmt.Sprintf("check-%d.log", i)) }})
				e := (engineCPU() - e0) / checks
				if len(res) != checks || res[0].Pass != (name != "gofail") {
					b.Fatalf("%s %q: %+v", name, k, res[0])
				}
				kn := k
				if kn == "auto" {
					kn = "box"
				}
				per[name+"-"+kn] = append(per[name+"-"+kn], e)
			}
		}
	}
	for k, d := range per {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		b.ReportMetric(float64(d[len(d)/2])/1e6, k+"-engine-ms/check")
	}
}
