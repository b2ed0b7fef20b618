//go:build linux

package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// BenchmarkTemplateCPUWhole is BenchmarkTemplateCPU with the engine's side
// counted by a cgroup, not by what the engine waited for: the loop's run
// box (bubblewrap and the layer helper, started once per loop, serving
// every run) and the agents it starts are not the engine's children
// until the loop ends, and a run's agent is not the engine's child at
// all. The engine runs in a child process born in a cgroup of its own
// (its runs' cgroups are made below it), twice: with 2 build iterations
// and with 2+N; the difference of the two cgroups' CPU over N is one
// iteration of the whole tree, the loop's start and end left out. Where
// no cgroup can be made (an ordinary user without a delegated one) it is
// skipped.
func BenchmarkTemplateCPUWhole(b *testing.B) {
	for _, n := range []int{0, 10000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) { benchTemplateCPUWhole(b, n) })
	}
}

// envWholeChild marks the child process of BenchmarkTemplateCPUWhole:
// the loop folder and the number of build iterations.
const envWholeChild = "LOOPRINTER_BENCH_WHOLE_CHILD"

func benchTemplateCPUWhole(b *testing.B, files int) {
	if probePass(b) {
		return
	}
	if err := sandbox.CgroupProbe(); err != nil {
		b.Skip("no cgroup to count the engine's whole tree in: ", err)
	}
	// A loop folder of its own for each child: a loop resumes its state.
	folder := func() string {
		dir := b.TempDir()
		generateCheckout(b, dir, files)
		os.MkdirAll(filepath.Join(dir, loopdir.OutputDir), 0o755)
		os.WriteFile(loopdir.Dir(dir).Plan(), []byte(`{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`), 0o644)
		os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(wholeLoopFile), 0o644)
		return dir
	}
	dirs := []string{folder(), folder(), folder()}
	cpu := func(dir string, iterations int) time.Duration {
		g, err := sandbox.NewCgroup("bench-whole")
		if err != nil {
			b.Skip("no cgroup: ", err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperWholeEngine$", "-test.count=1")
		cmd.Env = append(os.Environ(), envWholeChild+"="+dir+":"+strconv.Itoa(iterations), "LOOPRINTER_STATE_DIR="+b.TempDir())
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
		out, err := cmd.CombinedOutput()
		g.End()
		if err != nil {
			b.Fatalf("the engine's loop: %v\n%s", err, out)
		}
		c, ok := g.CPU()
		if !ok {
			b.Skip("the cgroup's cpu.stat cannot be read")
		}
		return c
	}
	b.ResetTimer()
	base := cpu(dirs[0], 2)
	more := cpu(dirs[1], 2+b.N)
	b.StopTimer()
	engine := float64(more-base) / float64(time.Millisecond) / float64(b.N)
	b.ReportMetric(engine, "engine-whole-cpu-ms/iter")
	tmpl := templateTreeCPU(b, dirs[2], min(b.N, 50))
	b.ReportMetric(tmpl, "tmpl-tree-cpu-ms/iter")
	if engine > 0 {
		b.ReportMetric(tmpl/engine, "tmpl/engine")
	}
}

// wholeLoopFile is BenchmarkTemplateCPU's loop file.
const wholeLoopFile = `objective: "a.txt exists"
agent: {backend: command, command: "true"}
agents: {build: {backend: command}}
budget: {iterations: 1000000, same_failure: 1000000, wall: 24h, cost_usd: 1}
sandbox: auto
protect: ["**/*_test.go"]
`

// TestHelperWholeEngine is BenchmarkTemplateCPUWhole's child process: it
// runs the engine's loop in the folder envWholeChild names for that many
// build iterations, with the benchmarks' no-op agent. Run any other way,
// it has nothing to do.
func TestHelperWholeEngine(t *testing.T) {
	v := os.Getenv(envWholeChild)
	if v == "" {
		t.Skip("the child process of BenchmarkTemplateCPUWhole")
	}
	i := len(v) - 1
	for i > 0 && v[i] != ':' {
		i--
	}
	dir, n := v[:i], v[i+1:]
	iterations, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	agent.Register("bench", func() agent.Adapter { return &timedAdapter{} })
	l, err := spec.Parse([]byte(wholeLoopFile), filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Agent.Backend = "bench"
	l.Agents = nil
	l.Budget.Iterations = iterations
	if _, err := Run(context.Background(), l, Options{}); err != nil {
		t.Fatal(err)
	}
}
