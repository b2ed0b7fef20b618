package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
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
