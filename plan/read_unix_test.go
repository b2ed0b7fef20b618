//go:build unix

package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	if _, _, err := Read(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing plan: %v", err)
	}
	if err := os.WriteFile(p, planJSON(t, "T-001", nil), 0o600); err != nil {
		t.Fatal(err)
	}
	got, errs, err := Read(p)
	if err != nil || len(errs) > 0 || got.Tasks[0].ID != "T-001" {
		t.Fatalf("read %+v %v %v", got, errs, err)
	}
	// A link or a fifo in its place is an error, never followed, never a hang.
	link := filepath.Join(dir, "link.json")
	os.Symlink(p, link)
	if got, errs, err := Read(link); err != nil || got != nil || !has(errs, "plan.json is a symlink, not a file") {
		t.Fatalf("a link: %v %v %v", got, errs, err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if got, errs, err := Read(fifo); err != nil || got != nil || len(errs) != 1 || !strings.Contains(errs[0], "not a file") {
			t.Fatalf("a fifo: %v %v %v", got, errs, err)
		}
	}
}
