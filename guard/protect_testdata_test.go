package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// The data files a Go test names (a folder of cases beside the tests,
// read through a helper; a file named by its path) are protected when
// they exist; a folder holding Go code is a package, not data; a new case
// file is the agent's; the rest stays free.
func TestGoTestDataProtected(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	write("go.mod", "module example.com/x\n\ngo 1.22\n")
	write("x.go", "package x\n")
	write("x_test.go", "package x\n\nimport \"testing\"\n\nfunc TestCases(t *testing.T) { cases(t, \"cases\"); _ = \"golden.txt\"; _ = \"sub\" }\n")
	write("cases/one.json", "{}")
	write("cases/deep/two.json", "{}")
	write("golden.txt", "x")
	write("sub/sub.go", "package sub\n")
	write("other.json", "{}")
	r, err := NewProtectRules(dir, &spec.Loop{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"cases/one.json", "cases/deep/two.json", "golden.txt"} {
		if p, ok := r.Rule(rel); !ok || !strings.Contains(p.Rule, "go-test-data-read") {
			t.Errorf("%s: %v %q", rel, ok, p.Rule)
		}
	}
	for _, rel := range []string{"sub/sub.go", "other.json", "x.go", "cases/new.json"} {
		if p, ok := r.Rule(rel); ok {
			t.Errorf("%s protected: %q", rel, p.Rule)
		}
	}
}
