// Package detect reads a project's folder and says how its tests run: the
// ecosystems it shows (go.mod, package.json, pyproject.toml …), the test
// command each one proposes (with the package manager of the lockfile and
// the Python interpreter that actually has pytest), and the build output
// to keep out of git.
// `looprinter init` proposes the command; `doctor` names it in its fixes.
package detect

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Ecosystems, in the order Find reports them.
const (
	Go     = "go"
	Node   = "node"
	Python = "python"
	Rust   = "rust"
	Make   = "make"
)

// Test is the test command one ecosystem of the project proposes.
type Test struct {
	Ecosystem string
	// Command is the check line, as the user would type it.
	Command string
	// Runner is the test runner it starts: go, jest, vitest, mocha, node,
	// pytest, unittest, cargo, make, or "" when the script's runner is not
	// one looprinter knows.
	Runner string
	// From says what it was read from: "go.mod", "package.json scripts.test
	// (vitest), pnpm-lock.yaml".
	From string
}

// Probe is what Find asks the machine: whether a program is on PATH and
// whether a Python interpreter can import a module. Tests replace it.
type Probe struct {
	LookPath  func(prog string) (string, error)
	HasModule func(dir, python, module string) bool
}

// System is the Probe of this machine: PATH, and `PYTHON -c 'import M'`
// with a 10-second timeout, run in the system's temporary folder so that
// no file of the project is imported in its place (an interpreter named
// by a relative path is the project's, found from dir).
var System = Probe{
	LookPath: exec.LookPath,
	HasModule: func(dir, python, module string) bool {
		py, err := Interpreter(dir, python)
		if err != nil || !moduleName.MatchString(module) {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, "-c", "import "+module)
		cmd.Dir = os.TempDir()
		cmd.WaitDelay = time.Second
		return cmd.Run() == nil
	},
}

var moduleName = regexp.MustCompile(`^[A-Za-z_][\w.]*$`)

// Interpreter is the absolute path of the program a check names: a
// relative path from dir, a bare name from PATH.
func Interpreter(dir, prog string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		return filepath.Abs(prog)
	}
	p, err := exec.LookPath(prog)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// Find returns the test command of each ecosystem the folder shows, in the
// order Go, Node, Python, Rust, then a Makefile's test target.
func Find(dir string, probe Probe) []Test {
	if probe.LookPath == nil {
		probe.LookPath = System.LookPath
	}
	if probe.HasModule == nil {
		probe.HasModule = System.HasModule
	}
	var out []Test
	if exists(dir, "go.mod") {
		// Written with -v by init, which says so (spec.CountedTestCommand).
		out = append(out, Test{Ecosystem: Go, Command: "go test ./...", Runner: "go", From: "go.mod"})
	}
	if t, ok := nodeTest(dir); ok {
		out = append(out, t)
	}
	if t, ok := pythonTest(dir, probe); ok {
		out = append(out, t)
	}
	if exists(dir, "Cargo.toml") {
		out = append(out, Test{Ecosystem: Rust, Command: "cargo test", Runner: "cargo", From: "Cargo.toml"})
	}
	if makeHasTest(dir) {
		out = append(out, Test{Ecosystem: Make, Command: "make test", Runner: "make", From: "Makefile (test target)"})
	}
	return out
}

// Ecosystems are the ecosystems the folder shows (go.mod, package.json,
// a Python project file or test file, Cargo.toml), whether or not they
// have tests.
func Ecosystems(dir string) []string {
	var out []string
	if exists(dir, "go.mod") {
		out = append(out, Go)
	}
	if exists(dir, "package.json") {
		out = append(out, Node)
	}
	if isPython(dir) {
		out = append(out, Python)
	}
	if exists(dir, "Cargo.toml") {
		out = append(out, Rust)
	}
	return out
}

// BuildOutput is the build output and dependency folders of the
// ecosystems, for .gitignore: a loop's commits take the whole folder.
func BuildOutput(ecosystems []string) []string {
	var out []string
	for _, e := range ecosystems {
		switch e {
		case Node:
			out = append(out, "node_modules/")
		case Python:
			out = append(out, "__pycache__/", ".pytest_cache/")
		case Rust:
			out = append(out, "target/")
		}
	}
	return out
}

// Suggest is an example test command for the folder, for a message that
// tells the user to add one: the first Find proposes, else "go test ./...".
func Suggest(dir string) string {
	if ts := Find(dir, Probe{LookPath: exec.LookPath, HasModule: func(string, string, string) bool { return false }}); len(ts) > 0 {
		return ts[0].Command
	}
	return "go test ./..."
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || len(b) > 4<<20 {
		return ""
	}
	return string(b)
}

// Node

type packageJSON struct {
	Scripts         map[string]string `json:"scripts"`
	PackageManager  string            `json:"packageManager"`
	DevDependencies map[string]string `json:"devDependencies"`
	Dependencies    map[string]string `json:"dependencies"`
}

// npmDefaultTest is what `npm init` writes as the test script.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

var (
	nodeRunners = []struct {
		re   *regexp.Regexp
		name string
	}{
		{regexp.MustCompile(`(^|[\s/;&|(])vitest(\s|$|;|&|\|)`), "vitest"},
		{regexp.MustCompile(`(^|[\s/;&|(])jest(\s|$|;|&|\|)`), "jest"},
		{regexp.MustCompile(`(^|[\s/;&|(])mocha(\s|$|;|&|\|)`), "mocha"},
		{regexp.MustCompile(`(^|[\s/;&|(])node\s+(?:[^;&|]*\s)?--test(\s|$|=)`), "node"},
	}
)

// NodeRunner names the test runner a package.json script starts, or "".
func NodeRunner(script string) string {
	for _, r := range nodeRunners {
		if r.re.MatchString(script) {
			return r.name
		}
	}
	return ""
}

// PackageManager is the package manager of the folder's lockfile (or of
// package.json's packageManager field): npm, pnpm, yarn or bun.
func PackageManager(dir string) (name, from string) {
	for _, l := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"},
		{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
	} {
		if exists(dir, l.file) {
			return l.pm, l.file
		}
	}
	var pj packageJSON
	if json.Unmarshal([]byte(read(dir, "package.json")), &pj) == nil && pj.PackageManager != "" {
		name, _, _ := strings.Cut(pj.PackageManager, "@")
		switch name {
		case "npm", "pnpm", "yarn", "bun":
			return name, "package.json packageManager"
		}
	}
	return "npm", ""
}

func nodeTest(dir string) (Test, bool) {
	data := read(dir, "package.json")
	if data == "" {
		return Test{}, false
	}
	var pj packageJSON
	if json.Unmarshal([]byte(data), &pj) != nil {
		return Test{}, false
	}
	script := strings.TrimSpace(pj.Scripts["test"])
	if script == "" || script == npmDefaultTest {
		return Test{}, false
	}
	pm, lock := PackageManager(dir)
	t := Test{Ecosystem: Node, Runner: NodeRunner(script)}
	switch pm {
	case "bun":
		t.Command = "bun run test" // `bun test` is bun's own runner, not the script
	default:
		t.Command = pm + " test"
	}
	t.From = "package.json scripts.test"
	if t.Runner != "" {
		t.From += " (" + t.Runner + ")"
	}
	if lock != "" {
		t.From += ", " + lock
	}
	return t, true
}

// Python

var (
	pytestConfig = []struct{ file, section string }{
		{"pytest.ini", ""}, {"pyproject.toml", "[tool.pytest.ini_options]"}, {"pyproject.toml", "[tool.pytest]"},
		{"setup.cfg", "[tool:pytest]"}, {"tox.ini", "[pytest]"},
	}
	pytestMention  = regexp.MustCompile(`(?m)^\s*(?:import pytest|from pytest\b|@pytest\.)`)
	unittestImport = regexp.MustCompile(`(?m)^\s*(?:import unittest|from unittest\b)`)
	pytestDep      = regexp.MustCompile(`(?m)["'\s=,\[]pytest(?:[<>=!~ \[;"',]|$)`)
)

func isPython(dir string) bool {
	for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "pytest.ini", "requirements.txt", "conftest.py"} {
		if exists(dir, f) {
			return true
		}
	}
	return len(pythonTestFiles(dir, 1)) > 0
}

// pythonTestFiles lists test_*.py and *_test.py files in the folder, its
// tests/ and test/ folders and one level below, at most max of them.
func pythonTestFiles(dir string, max int) []string {
	var out []string
	for _, sub := range []string{".", "tests", "test", "src"} {
		root := filepath.Join(dir, sub)
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || len(out) >= max {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "__pycache__" || strings.Count(rel, string(filepath.Separator)) >= 2 || (sub == "." && (d.Name() == "tests" || d.Name() == "test" || d.Name() == "src"))) {
					return filepath.SkipDir
				}
				return nil
			}
			n := d.Name()
			if strings.HasSuffix(n, ".py") && (strings.HasPrefix(n, "test_") || strings.HasSuffix(n, "_test.py")) {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// UsesPytest says whether the folder's project runs its tests with pytest
// (its configuration, a conftest.py, pytest in its dependencies or its test
// files) and what says so.
func UsesPytest(dir string) (bool, string) {
	for _, c := range pytestConfig {
		data := read(dir, c.file)
		if data == "" && !exists(dir, c.file) {
			continue
		}
		if c.section == "" || strings.Contains(data, c.section) {
			return true, c.file
		}
	}
	for _, c := range []string{"conftest.py", "tests/conftest.py", "test/conftest.py"} {
		if exists(dir, c) {
			return true, c
		}
	}
	for _, f := range []string{"pyproject.toml", "setup.cfg", "setup.py", "requirements-dev.txt", "requirements-test.txt", "dev-requirements.txt", "requirements.txt", "tox.ini"} {
		if pytestDep.MatchString(read(dir, f)) {
			return true, f + " (pytest in its dependencies)"
		}
	}
	for _, f := range pythonTestFiles(dir, 50) {
		b, _ := os.ReadFile(f)
		if pytestMention.Match(b) {
			rel, _ := filepath.Rel(dir, f)
			return true, rel
		}
	}
	return false, ""
}

// Pythons are the interpreters tried, in order: the project's virtual
// environment, then python3 and python on PATH.
func pythons(dir string, probe Probe) []string {
	var out []string
	for _, v := range []string{".venv/bin/python", "venv/bin/python", ".venv/bin/python3", "venv/bin/python3"} {
		if st, err := os.Stat(filepath.Join(dir, v)); err == nil && !st.IsDir() {
			out = append(out, v)
			break
		}
	}
	for _, p := range []string{"python3", "python"} {
		if _, err := probe.LookPath(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// PytestCommand is how to start pytest in the folder: the first
// interpreter that can import it (`python3 -m pytest`), else a pytest
// program on PATH; ok is false when none has it (then cmd is
// `python3 -m pytest`, which will not start until pytest is installed).
func PytestCommand(dir string, probe Probe) (cmd string, ok bool) {
	for _, py := range pythons(dir, probe) {
		if probe.HasModule(dir, py, "pytest") {
			return py + " -m pytest", true
		}
	}
	if _, err := probe.LookPath("pytest"); err == nil {
		return "pytest", true
	}
	return "python3 -m pytest", false
}

func pythonTest(dir string, probe Probe) (Test, bool) {
	if !isPython(dir) {
		return Test{}, false
	}
	files := pythonTestFiles(dir, 50)
	usesPytest, why := UsesPytest(dir)
	if !usesPytest {
		unittest := false
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if unittestImport.Match(b) {
				unittest = true
				break
			}
		}
		if unittest {
			py := "python3"
			if ps := pythons(dir, probe); len(ps) > 0 {
				py = ps[0]
			}
			cmd := py + " -m unittest"
			for _, d := range []string{"tests", "test"} {
				if st, err := os.Stat(filepath.Join(dir, d)); err == nil && st.IsDir() {
					cmd += " discover -s " + d
					if exists(dir, filepath.Join(d, "__init__.py")) {
						cmd += " -t ."
					}
					break
				}
			}
			if st, err := os.Stat(filepath.Join(dir, "src")); err == nil && st.IsDir() {
				cmd = "PYTHONPATH=src " + cmd
			}
			return Test{Ecosystem: Python, Command: cmd, Runner: "unittest", From: "test files that import unittest"}, true
		}
		if len(files) == 0 {
			return Test{}, false
		}
		why = "test files named test_*.py"
	}
	cmd, ok := PytestCommand(dir, probe)
	t := Test{Ecosystem: Python, Command: cmd, Runner: "pytest", From: why}
	if !ok {
		t.From += "; no interpreter on PATH can import pytest: install it (python3 -m pip install pytest)"
	}
	if pkg, ok := SrcPackage(dir); ok && !pytestPythonpath(dir) {
		py := "python3"
		if ps := pythons(dir, probe); len(ps) > 0 {
			py = ps[0]
		}
		if !probe.HasModule(dir, py, pkg) {
			t.Command = "PYTHONPATH=src " + t.Command
			t.From += fmt.Sprintf("; a src/ layout whose package %s is not installed: PYTHONPATH=src lets the tests import it (or install the project: python3 -m pip install -e .)", pkg)
		}
	}
	return t, true
}

// SrcPackage is the Python package (or module) of a src/ layout: the
// first src/NAME/__init__.py or src/NAME.py, by name.
func SrcPackage(dir string) (string, bool) {
	ents, err := os.ReadDir(filepath.Join(dir, "src"))
	if err != nil {
		return "", false
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir() && moduleName.MatchString(name) && exists(dir, filepath.Join("src", name, "__init__.py")):
			return name, true
		case !e.IsDir() && strings.HasSuffix(name, ".py") && moduleName.MatchString(strings.TrimSuffix(name, ".py")):
			return strings.TrimSuffix(name, ".py"), true
		}
	}
	return "", false
}

// pytestPythonpath says whether the project's pytest configuration sets
// its own pythonpath (pytest 7), which puts src/ on the path.
func pytestPythonpath(dir string) bool {
	for _, c := range pytestConfig {
		if b := read(dir, c.file); strings.Contains(b, c.section) && pythonpathSetting.MatchString(b) {
			return true
		}
	}
	return false
}

var pythonpathSetting = regexp.MustCompile(`(?m)^\s*pythonpath\s*=`)

// Make

var makeTestTarget = regexp.MustCompile(`^test\s*:([^=]|$)`)

func makeHasTest(dir string) bool {
	for _, name := range []string{"Makefile", "makefile", "GNUmakefile"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if makeTestTarget.MatchString(sc.Text()) {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	return false
}
