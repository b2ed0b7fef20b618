package gitops

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// touchAdapter is an agent that writes its task's file and exits: a build
// run whose work passes its task.
type touchAdapter struct{}

func (touchAdapter) Name() string { return "bench-touch" }

func (touchAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	if req.Task == "" {
		return agent.Invocation{Path: "/bin/true", Env: []string{}}, nil
	}
	script := `t=` + req.Task + `
echo "$t" > "t/$t.txt"
sed -i "s|\"id\":\"$t\",\\([^}]*\\)\"passes\":false|\"id\":\"$t\",\\1\"passes\":true|" output/plan.json`
	return agent.Invocation{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin"}}, nil
}

func (touchAdapter) NewParser(agent.Request) agent.Parser { return touchParser{} }

type touchParser struct{}

func (touchParser) Line([]byte) []agent.ToolEvent { return nil }
func (touchParser) Finish(agent.Exit) agent.Result {
	return agent.Result{Status: agent.StatusOK}
}

// BenchmarkIterationCommits is a build iteration of a loop in a 50,000-file
// git checkout, each run's task passing, with the engine's commits on (one
// commit a passed task, as `looprinter run` makes them) and off, under the
// default sandbox: the wall time between two build runs' starts, median.
// The bar: commits on within 3× of off.
func BenchmarkIterationCommits(b *testing.B) {
	for _, commits := range []bool{false, true} {
		b.Run(fmt.Sprintf("commits=%v", commits), func(b *testing.B) {
			if b.N == 1 {
				return // the probe pass: the checkout is made once, for the real run
			}
			benchIterationCommits(b, 50000, commits)
		})
	}
}

func benchIterationCommits(b *testing.B, files int, commits bool) {
	agent.Register("bench-touch", func() agent.Adapter { return touchAdapter{} })
	dir := b.TempDir()
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	for i := 0; i < files; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			os.MkdirAll(sub, 0o755)
		}
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprint(i)), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "t"), 0o755)
	os.MkdirAll(filepath.Join(dir, loopdir.OutputDir), 0o755)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("output/\nworking-records/\n"), 0o644)
	var tasks []string
	for i := 1; i <= b.N; i++ {
		tasks = append(tasks, fmt.Sprintf(`{"id":"T-%03d","title":"t","description":"d","targetFile":"t/T-%03d.txt","passes":false,"notes":""}`, i, i))
	}
	os.WriteFile(loopdir.Dir(dir).Plan(), []byte(`{"tasks":[`+strings.Join(tasks, ",")+`]}`), 0o644)
	src := []byte(`objective: "every task's file exists"
agent: {backend: command, command: "true"}
budget: {iterations: 1000000, same_failure: 1000000, wall: 24h, cost_usd: 1}
`)
	os.WriteFile(filepath.Join(dir, "loop.yaml"), src, 0o644)
	testkit.Git(b, dir, "init", "-q", "-b", "main")
	testkit.Git(b, dir, "add", "-A")
	testkit.Git(b, dir, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "start")
	l, err := spec.Parse(src, filepath.Join(dir, "loop.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	l.Agent.Backend = "bench-touch"
	l.Budget.Iterations = b.N
	opts := loop.Options{}
	var starts []time.Time
	opts.Subscribers = []func(record.Event){func(e record.Event) {
		if e.Event == record.AgentStart && e.Phase == "build" {
			starts = append(starts, time.Now())
		}
	}}
	if commits {
		exec.Command("git", "-C", dir, "config", "user.email", "b@example.com").Run()
		exec.Command("git", "-C", dir, "config", "user.name", "b").Run()
		exec.Command("git", "-C", dir, "config", "gc.auto", "0").Run()
		c := NewCommitter(l) // as looprinter run makes it
		if c == nil {
			b.Fatal("no committer for a loop in a git checkout")
		}
		h := c.Hook()
		spent := map[string]time.Duration{}
		opts.Hooks = []loop.Hook{func(ev record.Event, emit func(record.Event)) error {
			t := time.Now()
			err := h(ev, emit)
			spent[ev.Event] += time.Since(t)
			return err
		}}
		defer func() {
			for k, v := range spent {
				if v > 10*time.Millisecond {
					b.ReportMetric(float64(v)/float64(time.Millisecond)/float64(b.N), "hook-"+k+"-ms/iter")
				}
			}
		}()
	}
	exec.Command("sync").Run()
	b.ResetTimer()
	if _, err := loop.Run(context.Background(), l, opts); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if commits {
		out, _ := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output()
		if n := strings.TrimSpace(string(out)); n != fmt.Sprint(b.N+1) && n != fmt.Sprint(b.N+2) {
			b.Fatalf("%s commits after %d build runs", n, b.N)
		}
	}
	var iter []float64
	for i := 1; i < len(starts); i++ {
		iter = append(iter, float64(starts[i].Sub(starts[i-1]))/float64(time.Millisecond))
	}
	if len(iter) == 0 {
		return
	}
	sort.Float64s(iter)
	b.ReportMetric(iter[len(iter)/2], "iter-ms(median)")
}
