package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CouldNotCollect reads genuine output of runners that could not collect
// their tests (testdata/collect/, pytest 7.2.1 and Python 3.11 on Debian,
// paths rewritten to /src/sample) in a project whose own package is under
// src/.
func TestCouldNotCollect(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src", "mylib"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "mylib", "__init__.py"), nil, 0o644)
	for _, tc := range []struct {
		file    string
		exit    int
		ok      bool
		why     string
		fix     string
		missing string
	}{
		{"pytest-conftest-own.txt", 4, true, "the project's own package mylib cannot be imported (No module named 'mylib')", "PYTHONPATH=src python3 -m pytest", ""},
		{"pytest-collect-own.txt", 2, true, "the project's own package mylib cannot be imported", "PYTHONPATH=src", ""},
		{"unittest-own.txt", 1, true, "the project's own package mylib cannot be imported", "python3 -m pip install -e .", ""},
		{"pytest-usage.txt", 4, true, "pytest refused the check's command line (exit 4): unrecognized arguments: --cov", "install the plugin", ""},
		{"pytest-not-found.txt", 4, true, "file or directory not found: nofile.py", "correct the path", "nofile.py"},
		{"pytest-no-tests.txt", 5, true, "pytest collected no tests (exit 5)", "say so in the objective", ""},
		{"unittest-none.txt", 1, false, "", "", ""},
		{"mocha-none.txt", 1, true, `the runner found no tests: Error: No test files found: "test"`, "write them", ""},
		{"jest-none.txt", 1, true, "the runner found no tests: No tests found, exiting with code 1", "", ""},
		{"vitest-none.txt", 1, true, "the runner found no tests: No test files found, exiting with code 1", "", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "collect", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			nc, ok := CouldNotCollect(string(b), tc.exit, dir)
			if ok != tc.ok || !strings.Contains(nc.Why, tc.why) || !strings.Contains(nc.Fix, tc.fix) || nc.Missing != tc.missing {
				t.Errorf("got %v %+v; want %v, why %q, fix %q, missing %q", ok, nc, tc.ok, tc.why, tc.fix, tc.missing)
			}
			if _, ok := CouldNotCollect(string(b), 0, dir); ok {
				t.Error("a check that passed collected its tests")
			}
		})
	}
	// Without the package in the folder, the module is not the project's:
	// pytest's collection error says to install it or name it.
	b, _ := os.ReadFile(filepath.Join("testdata", "collect", "pytest-collect-own.txt"))
	if nc, ok := CouldNotCollect(string(b), 2, t.TempDir()); !ok || nc.Missing != "mylib" || !strings.Contains(nc.Fix, "name it in the objective") {
		t.Errorf("elsewhere: %v %+v", ok, nc)
	}
	// unittest's import error of a module that is not there: the work's.
	b, _ = os.ReadFile(filepath.Join("testdata", "collect", "unittest-own.txt"))
	if nc, ok := CouldNotCollect(string(b), 1, t.TempDir()); ok {
		t.Errorf("a module to write: %+v", nc)
	}
	// A submodule of the project's own package that is not there yet.
	out := "=== test session starts ===\nE   ModuleNotFoundError: No module named 'mylib.sub'\n!!!!! Interrupted: 1 error during collection !!!!!\n"
	if nc, ok := CouldNotCollect(out, 2, dir); ok {
		t.Errorf("a submodule to write: %+v", nc)
	}
	for _, tc := range []struct {
		out  string
		exit int
		why  string
	}{
		{"No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n", 1, "the runner found no tests: No tests found, exiting with code 1"},
		{"\nNo test files found, exiting with code 1\n", 1, "No test files found, exiting with code 1"},
		{"Error: No test files found: \"test\"\n", 1, `No test files found: "test"`},
		{"\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", 5, "unittest found no tests (exit 5)"},
		{"Could not find '/src/x/nope.test.js'\n", 1, "node --test could not find /src/x/nope.test.js"},
		{"x_test.go:4:2: no required module provides package github.com/a/b; to add it:\n\tgo get github.com/a/b\nFAIL\texample.com/x [setup failed]\n", 1, "go could not load the package github.com/a/b"},
		{"go: go.mod requires go >= 1.99 (running go 1.22; GOTOOLCHAIN=local)\n", 1, "go could not load the module: go.mod requires go >= 1.99 (running go"},
		{"# ./nope\nstat /tmp/gt/nope: directory not found\nFAIL\t./nope [setup failed]\n", 1, "go found no package to test at /tmp/gt/nope"},
		{"# ./empty\nno Go files in /tmp/gt/empty\nFAIL\t./empty [setup failed]\n", 1, "go found no package to test at /tmp/gt/empty"},
		{"# ./x/...\npattern ./x/...: lstat ./x/: no such file or directory\nFAIL\t./x/... [setup failed]\n", 1, "go found no package to test at ./x/..."},
		{"go: warning: \"./empty/...\" matched no packages\nno packages to test\n", 1, "go found no package to test at ./empty/..."},
		{"error: no test target named `it`.\n", 101, "cargo could not build the tests: no test target named `it`."},
		{"error: failed to get `rand` as a dependency of package `x v0.1.0`\n", 101, "cargo could not build the tests: failed to get `rand` as a dependency"},
	} {
		nc, ok := CouldNotCollect(tc.out, tc.exit, dir)
		if !ok || !strings.Contains(nc.Why, tc.why) {
			t.Errorf("%q: %v %+v, want %q", tc.out, ok, nc, tc.why)
		}
	}
	// A failing test, a compile error of the work: collected.
	for _, out := range []string{
		"--- FAIL: TestX (0.00s)\n    x_test.go:5: no\nFAIL\n",
		"./x_test.go:9:5: undefined: Parse\nFAIL\texample.com/x [build failed]\n",
		"=== test session starts ===\ncollected 3 items\n=== 1 failed, 2 passed in 0.1s ===\n",
		"error[E0425]: cannot find function `parse` in this scope\n",
	} {
		if nc, ok := CouldNotCollect(out, 1, dir); ok {
			t.Errorf("%q: %+v", out, nc)
		}
	}
}

func TestProjectModule(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"src/a/__init__.py", "lib/b.py", "c/__init__.py", "d.py", "tests/e/__init__.py", ".venv/f/__init__.py"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "src", "g", "__init__.py"), 0o755) // not a file
	for mod, want := range map[string]string{"a": "src", "b": "lib", "c": ".", "d": ".", "e": "", "f": "", "g": "", "": "", "../x": ""} {
		got, ok := ProjectModule(dir, mod)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", mod, got, ok, want)
		}
	}
}
