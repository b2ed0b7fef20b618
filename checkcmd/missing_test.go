package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RunnerMissing reads the genuine output of runners that could not start
// (testdata/missing/, recorded on Debian with Python 3.11, npm 11, Node 20)
// and leaves a test's own failure alone.
func TestRunnerMissing(t *testing.T) {
	for _, tc := range []struct {
		file    string
		exit    int
		missing bool
		hint    string
	}{
		{"python-m-pytest.txt", 1, true, "python3 -m pip install pytest"},
		{"npm-missing-script.txt", 1, true, `no "test" script`},
		{"npm-mocha-not-found.txt", 127, true, "mocha was not found: the project's dependencies are not installed; run npm ci"},
		{"bash-not-found.txt", 127, true, "jest was not found"},
		{"node-cannot-find-module.txt", 1, true, "the package chai is not installed"},
		// The project's own module that the work is to create: a failure of the work.
		{"unittest-project-module-missing.txt", 1, false, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "missing", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			missing, hint := RunnerMissing(string(b), tc.exit)
			if missing != tc.missing || !strings.Contains(hint, tc.hint) {
				t.Errorf("RunnerMissing = %v, %q; want %v, containing %q", missing, hint, tc.missing, tc.hint)
			}
			if missing, _ := RunnerMissing(string(b), 0); missing {
				t.Error("a check that passed has no missing runner")
			}
		})
	}
	// A test that runs a program the work is to build: its runner fails
	// with 1, not the shell's 127: a failure of the work.
	if m, _ := RunnerMissing("sh: 1: mytool: not found\n1 failing\n", 1); m {
		t.Error("a test's own missing program counted")
	}
	// A package the work may be to add is not a missing runner.
	if m, _ := RunnerMissing("Error: Cannot find module 'lodash'\n", 1); m {
		t.Error("a dependency of the code counted")
	}
	// A test that prints a look-alike deep in its output is still a shell's line only at a line start.
	if m, _ := RunnerMissing("AssertionError: expected 'sh: 1: jest: not found' to equal ''", 1); m {
		t.Error("a quoted look-alike inside an assertion counted")
	}
}

func TestCheckStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"scripts":{"test":"NODE_ENV=test mocha --exit","lint":"eslint .","echo":"echo hi"}}`)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "pytest"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	noPytest := func(py, mod string) bool { return mod != "pytest" }
	for _, tc := range []struct {
		line, why, fix string
	}{
		{"python3 -m pytest -q", "python3 cannot import pytest", "or run the pytest program on PATH instead (`pytest -q`)"},
		{"cd . && python3 -m unittest discover", "", ""},
		{"python3 tests/run.py -m pytest", "", ""},
		{"npm test", `the "test" script runs mocha, which is neither in node_modules/.bin nor on PATH`, "npm install"},
		{"npm run lint", `the "lint" script runs eslint`, ""},
		{"npm run build", `package.json has no "build" script`, `add a "build" script`},
		{"yarn coverage", `package.json has no "coverage" script`, ""},
		{"npm run echo", "", ""},
		{"bun test", "", ""},
		{"npx jest --ci", "jest is not in node_modules/.bin: `npx jest --ci` would download it", "npm ci"},
	} {
		why, fix := CheckStart(tc.line, dir, bin, noPytest)
		if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) || !strings.Contains(fix, tc.fix) {
			t.Errorf("CheckStart(%q) = %q, %q; want %q, %q", tc.line, why, fix, tc.why, tc.fix)
		}
	}
	// Installed dependencies: the script's program is in node_modules/.bin.
	write("node_modules/.bin/mocha", "#!/bin/sh\n")
	if why, _ := CheckStart("npm test", dir, bin, noPytest); why != "" {
		t.Errorf("mocha installed: %q", why)
	}
	if why, _ := CheckStart("npx mocha --exit", dir, bin, noPytest); why != "" {
		t.Errorf("npx, mocha installed: %q", why)
	}
	if why, _ := CheckStart("python3 -m pytest", dir, bin, func(string, string) bool { return true }); why != "" {
		t.Errorf("pytest importable: %q", why)
	}
}

func TestRunnerMissingLog(t *testing.T) {
	log := filepath.Join("testdata", "missing", "npm-missing-script.txt")
	if m, hint := RunnerMissingLog(log, 1); !m || !strings.Contains(hint, `no "test" script`) {
		t.Errorf("%v %q", m, hint)
	}
	if m, _ := RunnerMissingLog(filepath.Join(t.TempDir(), "none.log"), 1); m {
		t.Error("a missing log counted")
	}
}
