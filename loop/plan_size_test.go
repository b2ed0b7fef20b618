package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A 100 MB plan.json is refused from its size alone: it is never read.
func TestHugePlanRefusedUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	start := time.Now()
	plan, errs, err := ReadPlan(p)
	if err != nil || plan != nil || len(errs) != 1 || !strings.Contains(errs[0], "at most") {
		t.Fatalf("plan %v, errs %v, err %v", plan, errs, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %s: it was read", d)
	}
}
