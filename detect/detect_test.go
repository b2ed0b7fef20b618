package detect

import (
	"errors"
	"reflect"
	"testing"

	"github.com/looprinter/looprinter/internal/testkit"
)

// machine is a Probe with the given programs on PATH and the interpreters
// that can import pytest.
func machine(onPath []string, withPytest ...string) Probe {
	return Probe{
		LookPath: func(p string) (string, error) {
			for _, x := range onPath {
				if x == p {
					return "/usr/bin/" + p, nil
				}
			}
			return "", errors.New("not found")
		},
		HasModule: func(dir, py, mod string) bool {
			for _, x := range withPytest {
				if x == py && mod == "pytest" {
					return true
				}
			}
			return false
		},
	}
}

func TestFind(t *testing.T) {
	both := machine([]string{"python3", "python", "pytest"}, "python3")
	for _, tc := range []struct {
		name  string
		files map[string]string
		probe Probe
		want  []string // command, runner
	}{
		{"go", map[string]string{"go.mod": "module x\n", "x_test.go": "package x\n"}, both, []string{"go test ./...", "go"}},
		{"mocha npm", map[string]string{"package.json": `{"scripts":{"test":"mocha --check-leaks test/"}}`, "package-lock.json": "{}"}, both, []string{"npm test", "mocha"}},
		{"vitest pnpm", map[string]string{"package.json": `{"scripts":{"test":"vitest run"}}`, "pnpm-lock.yaml": ""}, both, []string{"pnpm test", "vitest"}},
		{"jest yarn", map[string]string{"package.json": `{"scripts":{"test":"NODE_ENV=test jest --ci"}}`, "yarn.lock": ""}, both, []string{"yarn test", "jest"}},
		{"node test bun", map[string]string{"package.json": `{"scripts":{"test":"node --test test/"}}`, "bun.lockb": ""}, both, []string{"bun run test", "node"}},
		{"npm default script", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, both, nil},
		{"pytest conftest", map[string]string{"pyproject.toml": "[project]\nname='x'\n", "tests/conftest.py": "", "tests/test_a.py": "def test_a(): pass\n"}, both, []string{"python3 -m pytest", "pytest"}},
		{"pytest only Debian's", map[string]string{"pytest.ini": "[pytest]\n", "test_a.py": ""}, machine([]string{"python3", "pytest"}), []string{"pytest", "pytest"}},
		{"pytest in venv", map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", ".venv/bin/python": ""}, machine([]string{"python3"}, ".venv/bin/python"), []string{".venv/bin/python -m pytest", "pytest"}},
		{"pytest nowhere", map[string]string{"setup.cfg": "[tool:pytest]\n"}, machine([]string{"python3"}), []string{"python3 -m pytest", "pytest"}},
		{"unittest src", map[string]string{"pyproject.toml": "[project]\nname='x'\n", "src/x/__init__.py": "", "tests/test_x.py": "import unittest\n"}, both, []string{"PYTHONPATH=src python3 -m unittest discover -s tests", "unittest"}},
		{"unittest package", map[string]string{"setup.py": "", "tests/__init__.py": "", "tests/test_x.py": "from unittest import TestCase\n"}, both, []string{"python3 -m unittest discover -s tests -t .", "unittest"}},
		{"cargo", map[string]string{"Cargo.toml": "[package]\n"}, both, []string{"cargo test", "cargo"}},
		{"make", map[string]string{"Makefile": "all:\n\ttrue\ntest: all\n\t./run\n"}, both, []string{"make test", "make"}},
		{"make without test", map[string]string{"Makefile": "TEST := 1\ntest_x:\n\ttrue\n"}, both, nil},
		{"nothing", map[string]string{"README": ""}, both, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := Find(testkit.Tree(t, tc.files), tc.probe)
			var got []string
			if len(ts) > 0 {
				got = []string{ts[0].Command, ts[0].Runner}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q (all: %+v)", got, tc.want, ts)
			}
		})
	}
}

func TestBuildOutputPerEcosystem(t *testing.T) {
	py := testkit.Tree(t, map[string]string{"pyproject.toml": ""})
	if got := BuildOutput(Ecosystems(py)); !reflect.DeepEqual(got, []string{"__pycache__/", ".pytest_cache/"}) {
		t.Errorf("python: %q", got)
	}
	js := testkit.Tree(t, map[string]string{"package.json": "{}"})
	if got := BuildOutput(Ecosystems(js)); !reflect.DeepEqual(got, []string{"node_modules/"}) {
		t.Errorf("node: %q", got)
	}
	if got := BuildOutput(Ecosystems(testkit.Tree(t, map[string]string{"go.mod": ""}))); got != nil {
		t.Errorf("go: %q", got)
	}
}

func TestNodeRunner(t *testing.T) {
	for script, want := range map[string]string{
		"mocha":                                  "mocha",
		"nyc --reporter=text mocha -R spec":      "mocha",
		"vitest":                                 "vitest",
		"npx jest --coverage":                    "jest",
		"node --test":                            "node",
		"node --experimental-strip-types --test": "node",
		"tsc && node dist/run.js":                "",
		"jestify":                                "",
	} {
		if got := NodeRunner(script); got != want {
			t.Errorf("NodeRunner(%q) = %q, want %q", script, got, want)
		}
	}
}
