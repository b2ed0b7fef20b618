package loop

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/proc"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// timedAdapter runs /bin/true and measures the agent's own run time: from
// the moment the engine asks for the command line to the parser's verdict.
type timedAdapter struct {
	mu    sync.Mutex
	start time.Time
	spent []time.Duration
	touch bool // write the task's target (t/TASK.txt) as the run starts: its work
	// change, when not 0, is the number of files the agent changes in each
	// run, from inside its sandbox (a comment line appended to each of the
	// first change non-test .go files of generateCheckout's checkout: the
	// files stay valid Go, as a formatter's would, so that the engine
	// applies them; a byte that breaks the syntax is a tell, and the
	// change is refused instead).
	change int
}

func (a *timedAdapter) Name() string { return "bench" }

func (a *timedAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	a.mu.Lock()
	a.start = time.Now()
	a.mu.Unlock()
	if a.touch && req.Task != "" {
		os.WriteFile(filepath.Join(req.Dir, "t", req.Task+".txt"), []byte(req.Task), 0o644)
	}
	if a.change > 0 {
		prog := fmt.Sprintf(`BEGIN { for (i = 1; n < %d; i++) if (i %% 10) { f = sprintf("pkg/p%%04d/f%%05d.go", int(i / 100), i); printf "//\n" >> f; close(f); n++ } }`, a.change)
		return agent.Invocation{Path: "/usr/bin/awk", Args: []string{prog}, Env: []string{}}, nil
	}
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
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) { benchBuildIteration(b, n, "off", false) })
	}
}

// BenchmarkBuildIterationSandbox is BenchmarkBuildIteration under the
// sandbox a user gets by default (auto: bubblewrap with copy-on-write
// layers where it runs), and in a 50,000-file git checkout where each run
// changes its task's file and the task passes. (The engine's commits are a
// hook of the command line's, internal/gitops: a commit's cost at that
// size is measured by go test -bench Commit ./internal/gitops.)
func BenchmarkBuildIterationSandbox(b *testing.B) {
	for _, n := range []int{0, 10000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) { benchBuildIteration(b, n, "auto", false) })
	}
	b.Run("git-files=50000", func(b *testing.B) { benchBuildIteration(b, 50000, "auto", true) })
}

// BenchmarkIterationChanged measures an iteration whose agent changes K
// files (a formatter over the repository, generated code) in a
// 100,000-file checkout, under the default sandbox (bubblewrap with
// copy-on-write layers), Landlock and off: the engine's work after a run
// must follow the number of files it changed (docs/design.md, "The cost
// of an iteration"). overhead-ms is the time between two runs' starts
// minus the agent's own run (its writes included); engine-cpu-ms the
// engine's CPU time per iteration, its children's excluded.
// LOOPRINTER_BENCH_FILES sets another checkout size.
func BenchmarkIterationChanged(b *testing.B) {
	files := 100000
	if v, err := strconv.Atoi(os.Getenv("LOOPRINTER_BENCH_FILES")); err == nil {
		files = v
	}
	for _, mode := range []string{"auto", "landlock", "off"} {
		for _, k := range []int{1, 100, 1000, 10000} {
			b.Run(fmt.Sprintf("sandbox=%s/changed=%d", mode, k), func(b *testing.B) {
				b.Setenv("LOOPRINTER_BENCH_ENGINE_ONLY", "1")
				benchIteration(b, files, mode, false, k)
			})
		}
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

// probePass says this is the pass with b.N = 1 that go test makes before the
// -benchtime Nx it was asked for: it is skipped, so that the checkout is
// not generated twice.
func probePass(b *testing.B) bool {
	if b.N != 1 {
		return false
	}
	f := flag.Lookup("test.benchtime")
	if f == nil || !strings.HasSuffix(f.Value.String(), "x") {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(f.Value.String(), "x"))
	return err == nil && n > 1
}

func benchBuildIteration(b *testing.B, files int, sandboxMode string, git bool) {
	benchIteration(b, files, sandboxMode, git, 0)
}

func benchIteration(b *testing.B, files int, sandboxMode string, git bool, change int) {
	if probePass(b) {
		return
	}
	ad := &timedAdapter{touch: git, change: change}
	agent.Register("bench", func() agent.Adapter { return ad })
	dir := b.TempDir()
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	generateCheckout(b, dir, files)
	os.MkdirAll(filepath.Join(dir, loopdir.OutputDir), 0o755)
	plan := `{"tasks":[{"id":"T-001","title":"t","description":"d","targetFile":"a.txt","passes":false,"notes":""}]}`
	if git {
		// One task a build run, each its own file: each run's work passes
		// its task, and the engine commits it.
		var tasks []string
		for i := 1; i <= b.N; i++ {
			tasks = append(tasks, fmt.Sprintf(`{"id":"T-%03d","title":"t","description":"d","targetFile":"t/T-%03d.txt","passes":false,"notes":""}`, i, i))
		}
		plan = `{"tasks":[` + strings.Join(tasks, ",") + `]}`
		os.MkdirAll(filepath.Join(dir, "t"), 0o755)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("output/\nworking-records/\n"), 0o644)
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "start"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(plan), 0o644)
	src := []byte(`objective: "a.txt exists"
agent: {backend: command, command: "true"}
agents: {build: {backend: command}}
budget: {iterations: 1000000, same_failure: 1000000, wall: 24h, cost_usd: 1}
sandbox: ` + sandboxMode + `
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
	var syncs []int64
	walks := 0 // runs judged by a full walk (the watch lost their changes)
	sub := func(e record.Event) {
		if e.Kind == "change_watch" && len(starts) > 0 {
			walks++
		}
		if e.Event == record.AgentStart {
			starts = append(starts, time.Now())
			cpus = append(cpus, cpuTime())
			syncs = append(syncs, journalSyncs.Load())
		}
	}
	// The checkout's files reach the disk first: the engine's fsyncs must
	// not wait for the writeback of the files the benchmark just made.
	syncDisks()
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
		b.ReportMetric(float64(syncs[len(syncs)-1]-syncs[0])/float64(len(syncs)-1), "state-syncs/iter")
		b.ReportMetric(float64(walks), "watch-walks")
	}
	if want := ReasonBudget; (out.Reason != want && !(git && out.Reason == ReasonDone)) || out.State.Iterations != b.N {
		b.Fatalf("outcome %s after %d iterations, want %s after %d", out.Reason, out.State.Iterations, want, b.N)
	}
	var overhead, iter []float64
	for i := 1; i < len(starts); i++ {
		overhead = append(overhead, float64(starts[i].Sub(starts[i-1])-ad.spent[i-1])/float64(time.Millisecond))
		iter = append(iter, float64(starts[i].Sub(starts[i-1]))/float64(time.Millisecond))
	}
	if len(overhead) == 0 {
		return
	}
	b.ReportMetric(median(overhead), "overhead-ms/iter(median)")
	b.ReportMetric(percentile(overhead, 90), "overhead-ms/iter(p90)")
	engine := median(iter)
	b.ReportMetric(engine, "iter-ms(median)")

	// LOOPRINTER_BENCH_ENGINE_ONLY: the engine alone (to profile it, or to
	// count its system calls).
	if os.Getenv("LOOPRINTER_BENCH_ENGINE_ONLY") != "" {
		return
	}
	// The floor, in the same folder: what any loop must do per iteration
	// (start the same no-op agent, append one line to a log and sync it).
	floor := floorIteration(b, dir, len(iter))
	b.ReportMetric(floor, "floor-ms(median)")
	b.ReportMetric(engine-floor, "above-floor-ms")
	// What the engine must add to the floor whatever it does: the prompt
	// and the transcript of each run are new files. Their cost is the file
	// system's, and differs from folder to folder of one disk.
	b.ReportMetric(2*fileCreate(b, filepath.Join(dir, loopdir.OutputDir), len(iter)), "two-new-files-ms(median)")

	// A bash loop doing the template's per-iteration steps in the same
	// folder (a git repository for it, made untimed). Not at 100,000 files:
	// its git status alone would take most of the benchmark's time.
	if files > 10000 {
		return
	}
	bash := bashLoopIteration(b, dir, min(len(iter), 100))
	b.ReportMetric(bash, "bash-iter-ms(median)")
	b.ReportMetric(bash/engine, "bash/engine")
	if engine > floor && bash > floor {
		b.ReportMetric((bash-floor)/(engine-floor), "bash/engine(above-floor)")
	}
}

// fileCreate is the median time to make a new file of 2 KB in dir (made,
// written, closed), as the engine makes a run's prompt file.
func fileCreate(b *testing.B, dir string, n int) float64 {
	sub, err := os.MkdirTemp(dir, "create-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sub)
	data := []byte(strings.Repeat("p", 2048))
	var d []float64
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("%04d.prompt.md", i)), data, 0o600); err != nil {
			b.Fatal(err)
		}
		d = append(d, float64(time.Since(t))/float64(time.Millisecond))
	}
	return median(d)
}

func median(v []float64) float64 { return percentile(v, 50) }

func percentile(v []float64, p int) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[min(len(s)*p/100, len(s)-1)]
}

// floorIteration is the median time of n iterations of the floor in dir:
// one fork and exec of /bin/true (the benchmark's agent, started as the
// engine starts it: its own process group, stdin, stdout and stderr pipes)
// and one line appended to a file and synced.
func floorIteration(b *testing.B, dir string, n int) float64 {
	f, err := os.OpenFile(filepath.Join(dir, "floor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	line := []byte(`{"v":1,"ts":"2026-01-01T00:00:00.000000000Z","event":"agent_end","phase":"build","task":"T-001","status":"ok"}` + "\n")
	var d []float64
	for i := 0; i < n; i++ {
		t := time.Now()
		cmd := exec.Command("/bin/true")
		cmd.Dir = dir
		cmd.Env = []string{}
		cmd.Stdin = strings.NewReader("prompt")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		cmd.SysProcAttr = proc.GroupAttr()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		f.Write(line)
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		d = append(d, float64(time.Since(t))/float64(time.Millisecond))
	}
	return median(d)
}

// bashLoopIteration runs testdata/template-loop.sh in dir for n build
// iterations and returns the median time of one.
func bashLoopIteration(b *testing.B, dir string, n int) float64 {
	script, err := filepath.Abs(filepath.Join("testdata", "template-loop.sh"))
	if err != nil {
		b.Fatal(err)
	}
	python := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3" // not a version manager's shim, which would triple its cost
	}
	gitignore := filepath.Join(dir, ".gitignore")
	os.WriteFile(gitignore, []byte("output/\nworking-records/\n"), 0o644)
	defer os.Remove(gitignore)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "checkout"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	defer os.RemoveAll(filepath.Join(dir, ".git"))
	cmd := exec.Command("bash", script, strconv.Itoa(n), "/bin/true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHON="+python, "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("the bash loop: %v\n%s", err, out)
	}
	var stamps []float64
	for _, l := range strings.Fields(string(out)) {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			b.Fatalf("the bash loop printed %q", l)
		}
		stamps = append(stamps, v)
	}
	if len(stamps) != n+1 {
		b.Fatalf("the bash loop ran %d iterations, want %d", len(stamps)-1, n)
	}
	var d []float64
	for i := 1; i < len(stamps); i++ {
		d = append(d, (stamps[i]-stamps[i-1])*1000)
	}
	return median(d)
}
