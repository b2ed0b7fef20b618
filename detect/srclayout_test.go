package detect

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
)

// A src/ layout whose package the interpreter cannot import gets
// PYTHONPATH=src, and says why; an installed package, a pytest
// configuration with its own pythonpath, or no src/ package: none.
func TestFindSrcLayout(t *testing.T) {
	probe := machine([]string{"python3"}, "python3")
	installed := probe
	installed.HasModule = func(dir, py, mod string) bool { return mod == "pytest" || mod == "mylib" }
	for _, tc := range []struct {
		name  string
		files map[string]string
		probe Probe
		want  string
		from  string
	}{
		{"src package", map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", "src/mylib/__init__.py": "", "tests/test_x.py": ""}, probe,
			"PYTHONPATH=src python3 -m pytest", "a src/ layout whose package mylib is not installed: PYTHONPATH=src"},
		{"src module", map[string]string{"pytest.ini": "[pytest]\n", "src/one.py": "", "test_x.py": ""}, probe, "PYTHONPATH=src python3 -m pytest", "package one"},
		{"installed", map[string]string{"pytest.ini": "[pytest]\n", "src/mylib/__init__.py": "", "test_x.py": ""}, installed, "python3 -m pytest", ""},
		{"pythonpath set", map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n", "src/mylib/__init__.py": ""}, probe, "python3 -m pytest", ""},
		{"src without a package", map[string]string{"pytest.ini": "[pytest]\n", "src/data/x.txt": "", "src/ns/mod.py": "", "test_x.py": ""}, probe, "python3 -m pytest", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Find(testkit.Tree(t, tc.files), tc.probe)
			if len(got) != 1 || got[0].Command != tc.want || tc.from != "" && !strings.Contains(got[0].From, tc.from) || tc.from == "" && strings.Contains(got[0].From, "src/") {
				t.Errorf("got %+v, want %q (from %q)", got, tc.want, tc.from)
			}
		})
	}
}
