package loop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// BenchmarkSetAside measures what the clean room spends before its checks
// run: one walk of the loop folder and the runner rules (Go's test support
// found by reading every .go file's imports), in a Go module of 10,000
// files, one in ten a test file, 100 of them new.
func BenchmarkSetAside(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/big\n\ngo 1.22\n"), 0o644)
	var start []string
	for i := 0; i < 10000; i++ {
		d := fmt.Sprintf("pkg%03d", i/100)
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		name := fmt.Sprintf("f%04d.go", i)
		body := "package p\n\nimport \"fmt\"\n\nvar _ = fmt.Sprint\n"
		if i%10 == 0 {
			name = fmt.Sprintf("f%04d_test.go", i)
			body = "package p\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"
			if i%100 != 0 {
				start = append(start, d+"/"+name) // the others are new
			}
		}
		os.WriteFile(filepath.Join(dir, d, name), []byte(body), 0o644)
	}
	start = append(start, "go.mod")
	priv := b.TempDir()
	data, _ := json.Marshal(guard.RunnerFiles{Files: start, Top: []string{"go.mod"}})
	os.WriteFile(loopdir.Private(priv).RunnerFilesAtStart(), data, 0o600)
	e := &Engine{spec: &spec.Loop{Dir: dir}, dir: dir, priv: priv}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		aside, err := setAside(e.dir, e.priv, e.spec, e.judge().IsHoldout)
		if err != nil {
			b.Fatal(err)
		}
		if len(aside) != 100 {
			b.Fatalf("set aside %d files, want 100", len(aside))
		}
	}
}
