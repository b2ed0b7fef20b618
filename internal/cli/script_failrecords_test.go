package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// failRecordsBudget bounds what a failing script prints of its records.
const (
	failRecordsBudget = 48 << 10
	failRecordsLines  = 40
)

// keepRecordsOnFailure has a failing script print the last lines of every
// record file its loops wrote ($WORK/**/working-records/*.jsonl, the
// engines' folders beside $WORK included) into the test's log before its
// folder is removed: a failure seen once in CI then says what the engine
// recorded, not only what the script expected.
func keepRecordsOnFailure(env *testscript.Env) {
	t, ok := env.T().(interface {
		Failed() bool
		Log(...any)
	})
	if !ok {
		return
	}
	work := env.WorkDir
	env.Defer(func() {
		if t.Failed() {
			t.Log(failedRecords(work, work+".xdg"))
		}
	})
}

// failedRecords is the tails of the record files under roots, each named
// by its path, within failRecordsBudget bytes in all.
func failedRecords(roots ...string) string {
	var files []string
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("records of the failed script (the last lines of each):\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
		if len(lines) > failRecordsLines {
			lines = lines[len(lines)-failRecordsLines:]
		}
		b.WriteString("== " + f + "\n")
		for _, l := range lines {
			if b.Len()+len(l) > failRecordsBudget {
				b.WriteString("… (cut)\n")
				return b.String()
			}
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestFailedRecordsTails(t *testing.T) {
	root := t.TempDir()
	rec := filepath.Join(root, "proj", "working-records")
	os.MkdirAll(rec, 0o755)
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf(`{"n":%d}`, i))
	}
	os.WriteFile(filepath.Join(rec, "loop.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(rec, "notes.txt"), []byte("not a record\n"), 0o644)
	got := failedRecords(root, root+".xdg")
	if !strings.Contains(got, `{"n":99}`) || !strings.Contains(got, `{"n":60}`) || strings.Contains(got, `{"n":59}`) {
		t.Fatalf("want the last %d lines of loop.jsonl, got:\n%s", failRecordsLines, got)
	}
	if strings.Contains(got, "not a record") {
		t.Fatalf("a file that is not a record was printed:\n%s", got)
	}
	big := strings.Repeat("x", 4096)
	var many []string
	for i := 0; i < failRecordsLines; i++ {
		many = append(many, big)
	}
	for i := 0; i < 3; i++ {
		os.WriteFile(filepath.Join(rec, fmt.Sprintf("big%d.jsonl", i)), []byte(strings.Join(many, "\n")), 0o644)
	}
	got = failedRecords(root)
	if len(got) > failRecordsBudget+64 || !strings.HasSuffix(got, "… (cut)\n") {
		t.Fatalf("%d bytes printed, want at most about %d and a cut", len(got), failRecordsBudget)
	}
}
