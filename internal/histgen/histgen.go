// Package histgen writes a loop with a long history of real-looking records
// (test support): the records one engine writes for each build iteration —
// an agent run with its tool calls, the cycle gate, a commit — in a run
// file per invocation, with a scheduler's side file beside them, the
// engine's index, a state and a registry entry. The tests and benchmarks
// of the reads that must not grow with a loop's history use it.
package histgen

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// Options shape a history.
type Options struct {
	Name       string        // the loop's name in the registry
	Iterations int           // build iterations
	Every      time.Duration // time between iterations (default 10 minutes)
	End        time.Time     // when the last one ended (default now)
	PerFile    int           // iterations per run file (default 2,000)
	Ralph      bool          // a ralph loop: attempts instead of cycles
}

// Write writes the loop into dir (made if missing) and registers it.
func Write(dir string, o Options) error {
	if o.Every == 0 {
		o.Every = 10 * time.Minute
	}
	if o.End.IsZero() {
		o.End = time.Now()
	}
	if o.PerFile == 0 {
		o.PerFile = 2000
	}
	if o.Name == "" {
		o.Name = "history"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shape := ""
	if o.Ralph {
		shape = "shape: ralph\n"
	}
	lf := filepath.Join(dir, "loop.yaml")
	if err := os.WriteFile(lf, []byte("version: 1\nname: "+o.Name+"\n"+shape+"objective: the history\nverify: [\"go test ./...\"]\n"), 0o644); err != nil {
		return err
	}
	d := loopdir.Dir(dir)
	start := o.End.Add(-time.Duration(o.Iterations) * o.Every)
	side, err := d.CreateRecords("scheduler", "scheduler", start.Add(-time.Second))
	if err != nil {
		return err
	}
	side.SetRedactor(nil)
	defer side.Close()
	var w *record.Writer
	var last string
	var cost float64
	fail, pass := false, true
	for i := 0; i < o.Iterations; i++ {
		ts := start.Add(time.Duration(i) * o.Every)
		at := func(k int) time.Time { return ts.Add(time.Duration(k) * time.Second) }
		if i%o.PerFile == 0 {
			if w != nil {
				w.Write(record.Event{Event: record.LoopStop, TS: at(-1), Reason: "interrupted", Summary: "stopped to be started again", CostUSD: cost})
				w.Close()
			}
			run := fmt.Sprintf("run-%d", i/o.PerFile+1)
			if w, err = d.CreateRecords(run, "claude", ts); err != nil {
				return err
			}
			w.SetRedactor(nil)
			w.Write(record.Event{Event: record.LoopStart, TS: ts, Message: "looprinter run"})
			side.Write(record.Event{Event: record.Warning, TS: ts, Message: "scheduled run " + run + " started"})
		}
		cycle := i/3 + 1
		task := fmt.Sprintf("T-%03d", i%40+1)
		prompt := fmt.Sprintf("working-records/prompts/%06d-build.prompt.md", i+1)
		w.Write(record.Event{Event: record.AgentStart, TS: at(0), Phase: "build", Task: task, Cycle: cycle, Iteration: i + 1,
			Backend: "claude", Model: "claude-sonnet-4-5", PromptFile: prompt})
		for k := 0; k < 4; k++ {
			w.Write(record.Event{Event: record.ToolCall, TS: at(10 + k), Phase: "build", Task: task, Cycle: cycle, Tool: []string{"Read", "Edit", "Bash", "Bash"}[k],
				Message: []string{"src/pkg/file.go", "src/pkg/file.go: 12 lines", "go test ./pkg/...", "git diff --stat"}[k]})
		}
		c := 0.02 + float64(i%7)/100
		cost += c
		w.Write(record.Event{Event: record.AgentEnd, TS: at(60), Phase: "build", Task: task, Cycle: cycle, Iteration: i + 1, Backend: "claude", Model: "claude-sonnet-4-5",
			Status: "ok", CostUSD: c, InputTokens: 12000, OutputTokens: 900, CachedTokens: 8000, Turns: 6, DurationMS: 58000,
			Transcript: fmt.Sprintf("working-records/transcripts/%06d-build.log", i+1), FilesChanged: []string{"src/pkg/file.go"}})
		if i%3 == 2 {
			ok := i%9 == 8
			p := &fail
			sig := "--- FAIL: TestThing (0.00s)\n    thing_test.go:12: got 1, want 2\nFAIL\nFAIL\tpkg\t0.01s"
			checks := []record.Check{{Command: "go test ./...", ExitCode: 1, Pass: false}}
			if ok {
				p, sig, checks = &pass, "", []record.Check{{Command: "go test ./...", Pass: true}}
			}
			w.Write(record.Event{Event: record.Verify, TS: at(70), Gate: "cycle", Cycle: cycle, Iteration: i + 1, Pass: p, Checks: checks, FailureSignal: sig})
		}
		last = fmt.Sprintf("%07x", i+0x1000000)
		w.Write(record.Event{Event: record.Commit, TS: at(75), Pass: &pass, Message: last + " build " + task})
		switch {
		case i%500 == 499:
			w.Write(record.Event{Event: record.Rollback, TS: at(80), Message: "rolled back to the checkpoint of cycle " + fmt.Sprint(cycle-3)})
		case i%1000 == 999:
			w.Write(record.Event{Event: record.Land, TS: at(80), Message: "landed " + last + " on main"})
		}
	}
	if w != nil {
		w.Write(record.Event{Event: record.LoopStop, TS: o.End, Reason: loop.ReasonBudget, Summary: "the budget ran out", CostUSD: cost, ExitCode: record.Int(3)})
		w.Close()
	}
	st := &loop.State{Shape: "cycle", Phase: loop.PhaseBuild, Iterations: o.Iterations, AgentRuns: o.Iterations, Cycle: o.Iterations/3 + 1,
		StartedAt: start, CostUSD: cost, Outcome: loop.ReasonBudget}
	if o.Ralph {
		st.Shape = "ralph"
	}
	if w != nil {
		st.Records = w.Path()
	}
	if err := st.Save(dir); err != nil {
		return err
	}
	return ops.Save(ops.Entry{Name: o.Name, LoopFile: lf, Dir: dir, RunDir: dir})
}
