package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// A new module named like a distribution installed on the machine (not in
// the project's venv) that a test file imports is a runner file; one no
// test imports, or the project's own at the start, is not.
func TestProtectPythonShadowInstalledOnMachine(t *testing.T) {
	site := t.TempDir()
	os.MkdirAll(filepath.Join(site, "fakedist"), 0o755)
	os.WriteFile(filepath.Join(site, "fakeone.py"), nil, 0o644)
	os.WriteFile(filepath.Join(site, "fakeso.cpython-311-x86_64-linux-gnu.so"), nil, 0o644)
	os.MkdirAll(filepath.Join(site, "notimported"), 0o755)
	saved := pythonSiteDirs
	pythonSiteDirs = func() []string { return []string{filepath.Join(t.TempDir(), "none"), site} }
	t.Cleanup(func() { pythonSiteDirs = saved })
	dir, l := protectFixture(t, `objective: "the tests pass"
verify: ["python3 -m pytest -q"]
`, map[string]string{"calc.py": "", "test_calc.py": "import calc\nimport fakedist\nfrom fakeone import x\nimport fakeso\n"})
	r, err := NewProtectRules(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"fakedist.py", "fakedist/__init__.py", "fakeone.py", "fakeso.py"} {
		if _, ok := r.ProtectNew(rel); !ok || !r.RunnerFile(rel) {
			t.Errorf("new %s: protected %v, runner file %v", rel, ok, r.RunnerFile(rel))
		}
	}
	for _, rel := range []string{"notimported.py", "calc2.py"} {
		if p, ok := r.ProtectNew(rel); ok {
			t.Errorf("new %s is protected: %q", rel, p.Rule)
		}
	}
	if len(saved()) == 0 {
		t.Error("no site folder of the machine is looked at")
	}
}
