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
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// treeCPU is the CPU of this process and of every descendant it (or they)
// waited for: the whole process tree's, as far as the kernel reaps it.
func treeCPU() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	t := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return t(self) + t(kids)
}

// BenchmarkTemplateCPU sets the engine beside the template's loop in CPU
// per build iteration, the whole process tree counted for each: the
// engine under the sandbox a user gets by default (auto: bubblewrap with
// copy-on-write layers where it runs; the engine, the layer helper,
// bubblewrap and the no-op agent), and testdata/template-loop.sh in the
// same folder (bash, python3 twice, git status, the same no-op agent).
// The engine's figure runs from its first build run's start to its last
// (the setup before the first, once per loop, is not an iteration's); the
// template's is its whole run over its iterations. tmpl/engine is the
// ratio (the goal: 8). At 100,000 files the template's git repository is
// made first (untimed; a minute or more).
func BenchmarkTemplateCPU(b *testing.B) {
	for _, n := range []int{0, 10000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) { benchTemplateCPU(b, n) })
	}
}

func benchTemplateCPU(b *testing.B, files int) {
	if probePass(b) {
		return
	}
	ad := &timedAdapter{}
	agent.Register("bench", func() agent.Adapter { return ad })
	dir := b.TempDir()
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	generateCheckout(b, dir, files)
	os.MkdirAll(filepath.Join(dir, loopdir.OutputDir), 0o755)
	plan := `{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(plan), 0o644)
	src := []byte(`objective: "a.txt exists"
agent: {backend: command, command: "true"}
agents: {build: {backend: command}}
budget: {iterations: 1000000, same_failure: 1000000, wall: 24h, cost_usd: 1}
sandbox: auto
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
	var cpus, selfs []time.Duration
	sub := func(e record.Event) {
		if e.Event == record.AgentStart {
			cpus = append(cpus, treeCPU())
			selfs = append(selfs, cpuTime())
		}
	}
	syncDisks()
	b.ResetTimer()
	if _, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){sub}}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if len(cpus) < 2 {
		b.Fatalf("%d build runs: at least 2 are needed", len(cpus))
	}
	engine := float64(cpus[len(cpus)-1]-cpus[0]) / float64(time.Millisecond) / float64(len(cpus)-1)
	b.ReportMetric(engine, "engine-tree-cpu-ms/iter")
	b.ReportMetric(float64(selfs[len(selfs)-1]-selfs[0])/float64(time.Millisecond)/float64(len(selfs)-1), "engine-self-cpu-ms/iter")

	n := min(b.N, 50)
	tmpl := templateTreeCPU(b, dir, n)
	b.ReportMetric(tmpl, "tmpl-tree-cpu-ms/iter")
	if engine > 0 {
		b.ReportMetric(tmpl/engine, "tmpl/engine")
	}
}

// templateTreeCPU runs testdata/template-loop.sh in dir (a git repository
// made for it first, untimed) for n iterations and returns its whole
// process tree's CPU per iteration.
func templateTreeCPU(b *testing.B, dir string, n int) float64 {
	script, err := filepath.Abs(filepath.Join("testdata", "template-loop.sh"))
	if err != nil {
		b.Fatal(err)
	}
	python := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("output/\nworking-records/\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "checkout"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// The engine's plan: its one task stays open, so every iteration of
	// the template runs the agent.
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(`{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`), 0o644)
	cmd := exec.Command("bash", script, strconv.Itoa(n), "/bin/true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHON="+python, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	before := treeCPU()
	out, err := cmd.Output()
	spent := treeCPU() - before
	if err != nil {
		b.Fatalf("the template's loop: %v\n%s", err, out)
	}
	return float64(spent) / float64(time.Millisecond) / float64(n)
}
