//go:build !windows

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

	"github.com/looprinter/looprinter/internal/histgen"
	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// BenchmarkFloodPeakRSS runs `looprinter run` (this test binary standing in)
// while the agent writes 1 GiB to standard output, and reports the engine
// process's peak resident memory. Target: under 50 MB. The transcript gets
// every byte; the engine keeps only bounded buffers. Redaction is on (the
// default), with a secret-named variable in the environment; "json" is
// agent-like output with a URL on every line (redaction's costly case), and
// "json-redact-off" the same with `redact: off`, for the time it costs.
func BenchmarkFloodPeakRSS(b *testing.B) {
	b.Setenv("BENCH_SERVICE_TOKEN", "bench-secret-0123456789")
	json := `yes '{"type":"assistant","text":"see https://example.com/docs and run go test ./... -- task-abcdef: done"}' | head -c 1073741824`
	for _, tc := range []struct{ name, cmd, extra string }{
		{"lines", `sh -c "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1073741824"`, ""},
		{"no-newlines", `sh -c "head -c 1073741824 /dev/zero"`, ""},
		{"lines-redact-off", `sh -c "yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1073741824"`, "redact: off\n"},
		{"json", "script:" + json, ""},
		{"json-redact-off", "script:" + json, "redact: off\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rss, size := floodOnce(b, tc.cmd, tc.extra)
				if size != 1<<30 {
					b.Fatalf("transcript holds %d bytes, want %d", size, 1<<30)
				}
				b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
			}
		})
	}
}

func floodOnce(b *testing.B, agentCmd, extra string) (rssKB int64, transcript int64) {
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
	if script, ok := strings.CutPrefix(agentCmd, "script:"); ok {
		os.WriteFile(filepath.Join(loopDir, "flood.sh"), []byte(script+"\n"), 0o644)
		agentCmd = "sh flood.sh"
	}
	yaml := "shape: ralph\nobjective: \"survive a flood\"\nagent: {backend: command, command: '" + agentCmd + "', timeout: 5m}\nbudget: {iterations: 1}\nverify: [\"test -s working-records/transcripts/*-ralph.log\"]\n" + extra
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
	w, err := loopdir.Dir(dir).CreateRecords("r1", "claude", start)
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
	if _, err := loopdir.Dir(dir).Spend(); err != nil {
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

// BenchmarkReportSince times `report --since 24h` and `--since 7d` over a
// loop of 60,000 build iterations, one a second and one every ten minutes
// (all of it, or a sliver of it, in the window), its summary up to date
// as the engine leaves it: the window is read from the summary's timeline,
// so neither the history nor the window moves the time.
func BenchmarkReportSince(b *testing.B) {
	for _, every := range []time.Duration{time.Second, 10 * time.Minute} {
		b.Run("every="+every.String(), func(b *testing.B) {
			b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
			dir := b.TempDir()
			if err := histgen.Write(dir, histgen.Options{Name: "h", Iterations: 60000, Every: every}); err != nil {
				b.Fatal(err)
			}
			if _, err := loopdir.Dir(dir).Summary(); err != nil {
				b.Fatal(err)
			}
			for _, since := range []string{"24h", "7d"} {
				b.Run("since="+since, func(b *testing.B) {
					cpu0 := cpuTime()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						var out, errb bytes.Buffer
						root := NewRoot(&IO{In: strings.NewReader(""), Out: &out, Err: &errb})
						root.SetArgs([]string{"report", "--since", since})
						root.SetOut(&out)
						root.SetErr(&errb)
						if err := root.Execute(); err != nil || !strings.Contains(out.String(), "rollback:") {
							b.Fatalf("%v\n%s%s", err, out.String(), errb.String())
						}
					}
					b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				})
			}
		})
	}
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
