package confine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProtectedEditKeepsOnlyWhatTheGuardKeeps(t *testing.T) {
	dir, upper := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a_test.go"), []byte("old"), 0o644)
	p := filepath.Join(upper, "a_test.go")
	keep := func(ok bool) func(string, []byte, []byte) (bool, string) {
		return func(rel string, old, now []byte) (bool, string) {
			if rel != "a_test.go" || string(old) != "old" || string(now) != "new" {
				t.Fatalf("keep asked of %s %q → %q", rel, old, now)
			}
			return ok, "it weakens a test"
		}
	}
	os.WriteFile(p, []byte("old"), 0o644)
	if what, _ := ProtectedEdit(dir, "a_test.go", p, keep(false)); what != "" {
		t.Fatalf("unchanged: %q", what)
	}
	os.WriteFile(p, []byte("new"), 0o644)
	if what, why := ProtectedEdit(dir, "a_test.go", p, keep(false)); what != "modified" || why != "it weakens a test" {
		t.Fatalf("refused edit: %q %q", what, why)
	}
	if what, _ := ProtectedEdit(dir, "a_test.go", p, keep(true)); what != "" {
		t.Fatalf("kept edit: %q", what)
	}
	os.Chmod(p, 0o755)
	if what, _ := ProtectedEdit(dir, "a_test.go", p, keep(true)); what != "changed from mode 0644 to 0755" {
		t.Fatalf("mode change: %q", what)
	}
	os.Remove(p)
	os.Symlink("elsewhere", p)
	if what, _ := ProtectedEdit(dir, "a_test.go", p, keep(true)); what != "replaced by a symlink" {
		t.Fatalf("replaced: %q", what)
	}
}
