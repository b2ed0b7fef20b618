package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new module named like one of the standard library (unittest imports
// difflib lazily) or a test runner's dependency is a runner file: at the
// top and in a folder of test files pytest puts on the path; not inside a
// package, not a folder of other files, not the project's own.
func TestProtectPythonStdlibShadow(t *testing.T) {
	dir, l := protectFixture(t, `objective: "the tests pass"
verify: ["python3 -m pytest -q"]
`, map[string]string{"calc.py": "", "tests/test_calc.py": "import calc\n", "pkg/__init__.py": "", "json/data.txt": ""})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"difflib.py", "argparse/__init__.py", "pluggy.py", "tests/difflib.py", "tests/fnmatch/__init__.py"} {
		if _, ok := r.ProtectNew(rel); !ok {
			t.Errorf("new %s is not protected", rel)
		}
		if !r.RunnerFile(rel) {
			t.Errorf("new %s is not a runner file", rel)
		}
	}
	for _, rel := range []string{"pkg/difflib.py", "html/index.html", "json/more.py", "helpers.py", "calc2.py", "tests/helpers.py", "difflib.txt"} {
		if p, ok := r.ProtectNew(rel); ok {
			t.Errorf("new %s is protected: %q", rel, p.Rule)
		}
	}
	if p, ok := r.ProtectNew("difflib.py"); !ok || !strings.Contains(p.Rule, "python-shadow") {
		t.Errorf("rule: %q", p.Rule)
	}
}

// Judged after the run created it (the guard asks once the file is
// there), a new shadow package is still new.
func TestProtectPythonShadowCreated(t *testing.T) {
	dir, l := protectFixture(t, "objective: x\nverify: [\"python3 -m pytest\"]\n", map[string]string{"tests/test_a.py": ""})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tests", "fnmatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "fnmatch", "__init__.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.ProtectNew("tests/fnmatch/__init__.py"); !ok {
		t.Fatal("a shadow package created by the run is not protected")
	}
}
