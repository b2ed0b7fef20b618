package ops

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
)

// BenchmarkStatus50 is `looprinter status` over 50 registered loops, each
// with state, a ten-task plan and its lock held (as when they all run).
func BenchmarkStatus50(b *testing.B) {
	b.Setenv("LOOPRINTER_STATE_DIR", b.TempDir())
	root := b.TempDir()
	for i := 0; i < 50; i++ {
		dir := filepath.Join(root, fmt.Sprintf("l%02d", i))
		os.MkdirAll(filepath.Join(dir, "output"), 0o755)
		os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("objective: x\n"), 0o644)
		st := &loop.State{Shape: "cycle", Cycle: 2, Phase: loop.PhaseBuild, CurrentTask: "T-004", StartedAt: time.Now()}
		st.Save(dir)
		plan := `{"tasks":[`
		for k := 1; k <= 10; k++ {
			if k > 1 {
				plan += ","
			}
			plan += fmt.Sprintf(`{"id":"T-%03d","title":"t","description":"d","targetFile":"f%d","passes":%v,"notes":""}`, k, k, k < 4)
		}
		os.WriteFile(filepath.Join(dir, "output", "plan.json"), []byte(plan+"]}"), 0o644)
		lock, err := loopdir.AcquireLock(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer lock.Release()
		Save(Entry{Name: fmt.Sprintf("l%02d", i), LoopFile: filepath.Join(dir, "loop.yaml"), Dir: dir, RunDir: dir})
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		entries, _ := Entries()
		if len(entries) != 50 {
			b.Fatalf("%d entries", len(entries))
		}
		for _, e := range entries {
			if s := Inspect(e); s.State != StateRunning {
				b.Fatalf("%s: %s", e.Name, s.State)
			}
		}
	}
}
