package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/enginedir"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/spend"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/record"
)

// BenchmarkFloodPeakRSS runs `looprinter run` (this test binary standing in)
// while the agent writes 1 GiB to standard output, and reports the engine
// process's peak resident memory. Target: under 50 MB. The transcript gets
// every byte; the engine keeps only bounded buffers.
func BenchmarkFloodPeakRSS(b *testing.B) {
	for _, tc := range []struct{ name, cmd string }{
		{"lines", `sh -c "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1073741824"`},
		{"no-newlines", `sh -c "head -c 1073741824 /dev/zero"`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rss, size := floodOnce(b, tc.cmd)
				if size != 1<<30 {
					b.Fatalf("transcript holds %d bytes, want %d", size, 1<<30)
				}
				b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
			}
		})
	}
}

func floodOnce(b *testing.B, agentCmd string) (rssKB int64, transcript int64) {
	dir := b.TempDir()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	if err := os.Symlink(self, filepath.Join(bin, "looprinter")); err != nil {
		b.Fatal(err)
	}
	loopDir := filepath.Join(dir, "loop")
	os.MkdirAll(loopDir, 0o755)
	yaml := "shape: ralph\nobjective: \"survive a flood\"\nagent: {backend: command, command: '" + agentCmd + "', timeout: 5m}\nbudget: {iterations: 1}\nverify: [\"test -s working-records/transcripts/*-ralph.log\"]\n"
	os.WriteFile(filepath.Join(loopDir, "loop.yaml"), []byte(yaml), 0o644)
	cmd := exec.Command(filepath.Join(bin, "looprinter"), "run", "-q")
	cmd.Dir = loopDir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("run: %v\n%s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	files, _ := filepath.Glob(filepath.Join(loopDir, "working-records", "transcripts", "*-ralph.log"))
	if len(files) != 1 {
		b.Fatalf("transcripts: %v", files)
	}
	st, _ := os.Stat(files[0])
	return ru.Maxrss, st.Size()
}

// BenchmarkReadsAt10000Iterations times `status NAME`, `logs -n 20` and
// `cost` on a loop whose records hold 10,000 build iterations (60,000
// records): each reads the end of the records or the running tally, so
// its time does not grow with the history. Target: under 20 ms each.
func BenchmarkReadsAt10000Iterations(b *testing.B) {
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("objective: x\n"), 0o644)
	start := time.Now().Add(-time.Hour)
	w, err := record.Create(filepath.Join(dir, loop.RecordsDir), "r1", "claude", start)
	if err != nil {
		b.Fatal(err)
	}
	w.Write(record.Event{Event: record.LoopStart, TS: start})
	for i := 0; i < 10000; i++ {
		ts := start.Add(time.Duration(i) * 100 * time.Millisecond)
		task := fmt.Sprintf("T-%03d", i%500)
		w.Write(record.Event{Event: record.AgentStart, Phase: "build", Task: task, Backend: "claude", Model: "sonnet", TS: ts})
		for k := 0; k < 3; k++ {
			w.Write(record.Event{Event: record.ToolCall, Phase: "build", Task: task, Tool: "Edit", Message: "edit src/file.go", TS: ts})
		}
		w.Write(record.Event{Event: record.AgentEnd, Phase: "build", Task: task, Backend: "claude", Model: "sonnet", Status: "ok",
			CostUSD: 0.01, InputTokens: 1000, OutputTokens: 100, DurationMS: 2000, TS: ts})
		w.Write(record.Event{Event: record.TaskPassed, Task: task, TS: ts})
	}
	w.Close()
	st := &loop.State{Shape: "cycle", Phase: loop.PhaseBuild, Iterations: 10000, StartedAt: start, Records: w.Path(), Outcome: loop.ReasonBudget}
	if err := st.Save(dir); err != nil {
		b.Fatal(err)
	}
	if err := ops.Save(ops.Entry{Name: "big", LoopFile: filepath.Join(dir, "loop.yaml"), Dir: dir, RunDir: dir}); err != nil {
		b.Fatal(err)
	}
	// The engine brings the spend tally up to date when a run ends.
	if _, err := spend.FromDirCached(filepath.Join(dir, loop.RecordsDir), filepath.Join(enginedir.For(dir), "spend.json")); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"status", "big"}, {"logs", "-n", "20", "big"}, {"cost", "big"}} {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var out, errb bytes.Buffer
				root := NewRoot(&IO{In: strings.NewReader(""), Out: &out, Err: &errb})
				root.SetArgs(args)
				root.SetOut(&out)
				root.SetErr(&errb)
				if err := root.Execute(); err != nil || out.Len() == 0 {
					b.Fatalf("%v: %v\n%s%s", args, err, out.String(), errb.String())
				}
			}
		})
	}
}
