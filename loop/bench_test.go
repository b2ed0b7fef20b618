package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// timedAdapter runs /bin/true and measures the agent's own run time: from
// the moment the engine asks for the command line to the parser's verdict.
type timedAdapter struct {
	mu    sync.Mutex
	start time.Time
	spent []time.Duration
}

func (a *timedAdapter) Name() string { return "bench" }

func (a *timedAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	a.mu.Lock()
	a.start = time.Now()
	a.mu.Unlock()
	return agent.Invocation{Path: "/bin/true", Env: []string{}}, nil
}

func (a *timedAdapter) NewParser(req agent.Request) agent.Parser { return &timedParser{a: a} }

type timedParser struct{ a *timedAdapter }

func (p *timedParser) Line([]byte) []agent.ToolEvent { return nil }

func (p *timedParser) Finish(exit agent.Exit) agent.Result {
	p.a.mu.Lock()
	p.a.spent = append(p.a.spent, time.Since(p.a.start))
	p.a.mu.Unlock()
	return agent.Result{Status: agent.StatusOK}
}

// BenchmarkBuildIteration measures the engine's own overhead per build
// iteration with an agent that does nothing: the time between two build
// runs' starts, minus the agent's own run time, in an empty folder and in
// generated checkouts of 10,000 and 100,000 files (a Go module: 100 files a
// folder, one in ten a test file, which the default rules protect).
func BenchmarkBuildIteration(b *testing.B) {
	for _, n := range []int{0, 10000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) { benchBuildIteration(b, n) })
	}
}

// generateCheckout writes n files under dir: a go.mod, then folders of 100
// files, one in ten a _test.go.
func generateCheckout(tb testing.TB, dir string, n int) {
	tb.Helper()
	if n == 0 {
		return
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	for i := 1; i < n; i++ {
		sub := filepath.Join(dir, "pkg", fmt.Sprintf("p%04d", i/100))
		if i == 1 || i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		name := fmt.Sprintf("f%05d.go", i)
		if i%10 == 0 {
			name = fmt.Sprintf("f%05d_test.go", i)
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte("package p\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// cpuTime is this process's user and system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchBuildIteration(b *testing.B, files int) {
	ad := &timedAdapter{}
	agent.Register("bench", func() agent.Adapter { return ad })
	dir := b.TempDir()
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	generateCheckout(b, dir, files)
	os.MkdirAll(filepath.Join(dir, OutputDir), 0o755)
	os.WriteFile(filepath.Join(dir, OutputDir, "plan.json"), []byte(`{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`), 0o644)
	src := []byte(`objective: "a.txt exists"
agent: {backend: command, command: "true"}
agents: {build: {backend: command}}
budget: {iterations: 1000000, same_failure: 1000000, wall: 24h, cost_usd: 1}
sandbox: off  # the sandbox start is measured on its own (go test -bench StartCost ./sandbox)
protect: ["**/*_test.go"]
`)
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	l.Agent.Backend = "bench"
	l.Agents = nil
	l.Budget.Iterations = b.N

	var starts []time.Time
	var cpus []time.Duration
	sub := func(e record.Event) {
		if e.Event == record.AgentStart {
			starts = append(starts, time.Now())
			cpus = append(cpus, cpuTime())
		}
	}
	// The checkout's files reach the disk first: the engine's fsyncs must
	// not wait for the writeback of the files the benchmark just made.
	syscall.Sync()
	t0 := time.Now()
	b.ResetTimer()
	out, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){sub}})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if len(starts) > 1 {
		// The engine's own CPU time from the first build run's start to the
		// last's (its children's excluded): what the machine's load changes
		// least. The setup before the first run (one walk, the first
		// snapshot of every protected file) is reported apart.
		b.ReportMetric(float64(cpus[len(cpus)-1]-cpus[0])/float64(time.Millisecond)/float64(len(cpus)-1), "engine-cpu-ms/iter")
		b.ReportMetric(float64(starts[0].Sub(t0))/float64(time.Millisecond), "setup-ms")
	}
	if out.Reason != ReasonBudget || out.State.Iterations != b.N {
		b.Fatalf("outcome %s after %d iterations, want budget_spent after %d", out.Reason, out.State.Iterations, b.N)
	}
	var overhead []float64
	for i := 1; i < len(starts); i++ {
		overhead = append(overhead, float64(starts[i].Sub(starts[i-1])-ad.spent[i-1])/float64(time.Millisecond))
	}
	if len(overhead) > 0 {
		sort.Float64s(overhead)
		b.ReportMetric(overhead[len(overhead)/2], "overhead-ms/iter(median)")
		b.ReportMetric(overhead[len(overhead)*9/10], "overhead-ms/iter(p90)")
	}
}
