package checkcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// What a runner prints when it could not collect the tests it was to run:
// it judged nothing, and the change a loop makes is not what it lacks.
var (
	// Python: an import error of a module, in pytest's "E" lines, a
	// traceback, or unittest's "Failed to import test module".
	pyImportError = regexp.MustCompile(`(?m)(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'`)
	// pytest: what stopped it before any test ran.
	pytestConftest   = regexp.MustCompile(`(?m)^ImportError while loading conftest '([^']+)'`)
	pytestUsage      = regexp.MustCompile(`(?m)^ERROR: usage: `)
	pytestArgError   = regexp.MustCompile(`(?m)^\S+: error: (.+)$`)
	pytestNotFound   = regexp.MustCompile(`(?m)^ERROR: file (?:or directory )?not found: (\S+)`)
	pytestNoTests    = regexp.MustCompile(`(?m)^(?:=+ )?(?:no tests ran|\d+ deselected)\b.*in [\d.]+s`)
	pytestSession    = regexp.MustCompile(`(?m)^=+ test session starts =+$`)
	pytestCollectErr = regexp.MustCompile(`(?m)^!+ Interrupted: \d+ errors? during collection !+$`)
	// unittest (Python 3.12+): no test was found.
	unittestNoTests = regexp.MustCompile(`(?m)^NO TESTS RAN\b`)
	// jest, vitest, mocha: no test file matched. mocha names the pattern
	// when the one it was given is no path ("Error: No test files found:
	// "test""), and names none when its folder is there but holds no file
	// of its extensions ("Error: No test files found": TypeScript tests
	// without mocha's .ts setup) or its glob matched nothing.
	jsNoTests = regexp.MustCompile(`(?m)^(?:No tests found, exiting with code \d+|No test files found, exiting with code \d+|Error: No test files found(?::? .*)?)$`)
	// node --test FILE where FILE is not there.
	nodeNotFound = regexp.MustCompile(`(?m)^Could not find '([^']+)'$`)
	// go: the module's dependencies or toolchain are not there.
	goEnv = regexp.MustCompile(`(?m)(?:no required module provides package (\S+?);|missing go\.sum entry for module providing package (\S+?)[ ;(]|go: updates to go\.mod needed|go\.mod requires go >= \S+ \(running go|go: cannot find main module|directory \S+ outside main module|dial tcp: lookup proxy\.golang\.org)`)
	// go: the package path the check names holds no Go package.
	goNoPackage = regexp.MustCompile(`(?m)^(?:no Go files in (\S+)|stat (\S+): directory not found|pattern (\S+): lstat \S+: no such file or directory|go: warning: "(\S+)" matched no packages)$`)
	// cargo: the manifest, a dependency or the test target named is not there.
	cargoEnv = regexp.MustCompile(`(?m)^error: (?:could not find ` + "`Cargo.toml`" + `|no test target named .*|failed to get .* as a dependency.*|no matching package named .*|failed to select a version for .*|failed to load source for dependency .*|failed to download .*|no targets specified in the manifest.*)$`)
)

// ansiEscape is a terminal's colour code (mocha and vitest colour their
// output even into a pipe).
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// NotCollected is what CouldNotCollect found: what stopped the runner
// (Why), what to do (Fix), and the module or path it missed (Missing),
// for telling it apart from one the loop's work is to write.
type NotCollected struct {
	Why, Fix, Missing string
}

// CouldNotCollect reads the output and exit status of a check that failed
// before any agent run and says whether its runner could not collect the
// tests it was to run: the project's own Python package cannot be
// imported (a src/ layout not on the path), pytest stopped before running
// a test (exit 2 on an import error, 4 on a usage error or a conftest that
// cannot load, 5 when it collected no tests), unittest, jest, vitest or
// mocha found no tests, `node --test` could not find its file, go found no
// package at a path the check names or could not load the module's
// dependencies or toolchain, cargo its manifest or dependencies. dir is the check's folder, where the project's own
// modules are looked for. ok is false for a check that passed and for a
// failure that a change of the code may fix.
func CouldNotCollect(output string, exit int, dir string) (NotCollected, bool) {
	if exit == 0 {
		return NotCollected{}, false
	}
	if len(output) > 1<<20 {
		output = output[:1<<20]
	}
	output = ansiEscape.ReplaceAllString(output, "")
	pytest := pytestSession.MatchString(output) || pytestConftest.MatchString(output) || pytestUsage.MatchString(output) || pytestNotFound.MatchString(output)
	// A top package not found: "No module named 'pkg.sub'" says pkg was.
	for _, m := range pyImportError.FindAllStringSubmatch(output, 20) {
		if parent, ok := ProjectModule(dir, m[1]); ok && !strings.Contains(m[1], ".") {
			return NotCollected{
				Why: fmt.Sprintf("the project's own package %s cannot be imported (No module named '%s'): the tests could not be collected", m[1], m[1]),
				Fix: ownModuleFix(parent), // it is there: not the work's to write
			}, true
		}
	}
	if m := pyImportError.FindStringSubmatch(output); m != nil && pytest && (exit == 2 || exit == 4) && !isProjectModule(dir, m[1]) {
		mod, _, _ := strings.Cut(m[1], ".")
		return NotCollected{
			Why:     fmt.Sprintf("pytest could not collect the tests (exit %d): No module named '%s'", exit, m[1]),
			Fix:     fmt.Sprintf("install it (python3 -m pip install %s, or your distribution's python3-%s) for the interpreter the check runs; if the loop's work is to write it, name it in the objective", pipName(mod), pipName(mod)),
			Missing: m[1],
		}, true
	}
	if pytest {
		switch exit {
		case 4:
			if m := pytestNotFound.FindStringSubmatch(output); m != nil {
				return NotCollected{Why: fmt.Sprintf("pytest could not collect the tests (exit 4): file or directory not found: %s", m[1]),
					Fix: "correct the path in the check", Missing: m[1]}, true
			}
			if m := pytestConftest.FindStringSubmatch(output); m != nil {
				return NotCollected{Why: fmt.Sprintf("pytest could not load %s (exit 4)", m[1]),
					Fix: "run the check yourself and make the conftest load (install what it imports)"}, true
			}
			if m := pytestArgError.FindStringSubmatch(output); m != nil {
				return NotCollected{Why: fmt.Sprintf("pytest refused the check's command line (exit 4): %s", strings.TrimSpace(m[1])),
					Fix: "correct the check's options, or install the plugin that adds them"}, true
			}
		case 5:
			if pytestNoTests.MatchString(output) || strings.Contains(output, "collected 0 items") {
				return NotCollected{Why: "pytest collected no tests (exit 5): the check's paths, -k or -m select none",
					Fix: NoTestsFix}, true
			}
		}
	}
	if unittestNoTests.MatchString(output) {
		return NotCollected{Why: fmt.Sprintf("unittest found no tests (exit %d)", exit), Fix: NoTestsFix}, true
	}
	if m := jsNoTests.FindString(output); m != "" {
		return NotCollected{Why: fmt.Sprintf("the runner found no tests: %s", m), Fix: NoTestsFix}, true
	}
	if m := nodeNotFound.FindStringSubmatch(output); m != nil {
		return NotCollected{Why: fmt.Sprintf("node --test could not find %s", m[1]), Fix: "correct the path in the check", Missing: m[1]}, true
	}
	if m := goNoPackage.FindStringSubmatch(output); m != nil {
		where := strings.TrimSuffix(m[1]+m[2]+m[3]+m[4], "/...")
		return NotCollected{Why: fmt.Sprintf("go found no package to test at %s", m[1]+m[2]+m[3]+m[4]),
			Fix: "correct the package path in the check; if the loop's work is to write that package, name it in the objective", Missing: where}, true
	}
	if m := goEnv.FindStringSubmatch(output); m != nil {
		pkg := m[1] + m[2]
		why := "go could not load the module: " + strings.TrimSpace(m[0])
		if pkg != "" {
			why = fmt.Sprintf("go could not load the package %s: the module's dependencies are not there", pkg)
		}
		return NotCollected{Why: why, Fix: "run go mod download (or go mod tidy) with the network before the loop, or add it as a setup: command; check the go directive against the installed Go", Missing: pkg}, true
	}
	if m := cargoEnv.FindString(output); m != "" {
		return NotCollected{Why: "cargo could not build the tests: " + strings.TrimPrefix(m, "error: "),
			Fix: "run cargo fetch with the network before the loop (or add it as a setup: command), and check the check's --test names and manifest"}, true
	}
	return NotCollected{}, false
}

// NoTestsFix is the Fix of a runner that found no tests.
const NoTestsFix = "correct the check's paths or filters so that it runs the tests; if the loop's work is to write them, say so in the objective (\"write tests …\")"

// ownModuleFix says how to make the project's package importable, found
// under parent ("." for the top of the folder).
func ownModuleFix(parent string) string {
	if parent == "." {
		return "install the project for the interpreter the check runs (python3 -m pip install -e .), or run the check from the project's top folder"
	}
	return fmt.Sprintf("start the check with PYTHONPATH=%s (e.g. `PYTHONPATH=%s python3 -m pytest`), or install the project for the interpreter the check runs (python3 -m pip install -e .)", parent, parent)
}

// ProjectModule says whether the Python module mod is the project's own:
// a package (mod/__init__.py) or module (mod.py) at the top of dir or one
// folder down (src/, lib/ …), and the folder it is in ("." for the top).
func ProjectModule(dir, mod string) (parent string, ok bool) {
	if mod == "" || strings.ContainsAny(mod, `/\`) {
		return "", false
	}
	for _, pat := range []string{mod + "/__init__.py", mod + ".py", "*/" + mod + "/__init__.py", "*/" + mod + ".py"} {
		ms, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range ms {
			rel, err := filepath.Rel(dir, m)
			if err != nil {
				continue
			}
			rel = filepath.ToSlash(rel)
			top, _, _ := strings.Cut(rel, "/")
			if top == "tests" || top == "test" || top == "node_modules" || strings.HasPrefix(top, ".") || top == "venv" {
				continue
			}
			if st, err := os.Stat(m); err != nil || !st.Mode().IsRegular() {
				continue
			}
			if top == mod || top == mod+".py" {
				return ".", true
			}
			return top, true
		}
	}
	return "", false
}

// isProjectModule says whether a dotted module's top package is the
// project's own: a submodule of it that is not there is the work's.
func isProjectModule(dir, mod string) bool {
	top, _, _ := strings.Cut(mod, ".")
	_, ok := ProjectModule(dir, top)
	return ok
}
