package checkcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// What a runner that could not start prints, in the output of a check that
// failed: the check did not judge the work, and no agent run can fix it.
var (
	// Python: "No module named pytest", "/usr/bin/python3: No module named
	// pytest", "ModuleNotFoundError: No module named 'vitest'" at the top.
	noModule = regexp.MustCompile(`(?m)^(?:\S*python[\d.]*: )?No module named ([\w.]+)\s*$`)
	// sh, bash, dash, zsh: "sh: 1: jest: not found", "bash: mocha: command
	// not found", "zsh: command not found: vitest".
	shNotFound  = regexp.MustCompile(`(?m)^(?:/\S*/)?(?:sh|bash|dash|ksh): (?:line )?(?:\d+: )?([^\s:]+): (?:command )?not found\s*$`)
	zshNotFound = regexp.MustCompile(`(?m)^zsh: command not found: (\S+)\s*$`)
	// npm, pnpm, yarn, bun: the script the check runs is not in package.json.
	npmMissingScript  = regexp.MustCompile(`(?m)^npm (?:ERR!|error) Missing script: "?([^"\s]+)"?`)
	pnpmMissingScript = regexp.MustCompile(`(?m)ERR_PNPM_NO_SCRIPT\b.*?Missing script: (\S+)`)
	yarnMissingScript = regexp.MustCompile(`(?m)^(?:error )?Command "([^"]+)" not found\.?\s*$`)
	bunMissingScript  = regexp.MustCompile(`(?m)^error: Script not found "([^"]+)"`)
	// node: a package the tests require is not installed.
	nodeNoModule = regexp.MustCompile(`(?m)^Error: Cannot find module '([^'./][^']*)'`)
	nodeNoPkg    = regexp.MustCompile(`(?m)Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package '([^']+)'`)
)

// RunnerMissing reads the output and exit status of a check that failed
// and says whether its test runner or a module it needs could not start:
// `No module named pytest`, `command not found` inside `npm test`, a
// missing npm script, a Node package that is not installed. Such a check
// judged nothing: the loop must stop BLOCKED before an agent run, with
// hint (what to install or change) for the user. A check that passed
// (exit 0) never has a missing runner.
//
// What the work itself may fix is not a missing runner: a test that
// imports a module of the project that does not exist yet, a package the
// code requires (only test tooling counts: mocha, chai, ts-jest …), a
// program a test runs (only the shell's own exit 127 counts). Read it at
// the baseline, before any agent run: the agent's code could print any of
// these lines later.
func RunnerMissing(output string, exit int) (missing bool, hint string) {
	if exit == 0 {
		return false, ""
	}
	if len(output) > 1<<20 {
		output = output[:1<<20]
	}
	if m := noModule.FindStringSubmatch(output); m != nil {
		mod := m[1]
		return true, fmt.Sprintf("the Python module %s is not installed for the interpreter the check runs: install it (python3 -m pip install %s, or your distribution's package, e.g. python3-%s) or start the check with an interpreter that has it", mod, pipName(mod), pipName(mod))
	}
	for _, re := range []*regexp.Regexp{npmMissingScript, pnpmMissingScript, yarnMissingScript, bunMissingScript} {
		if m := re.FindStringSubmatch(output); m != nil {
			return true, fmt.Sprintf("package.json has no %q script: add it (e.g. \"%s\": \"mocha\") or change the check to run the tests directly", m[1], m[1])
		}
	}
	if exit == 127 {
		// The shell's own "command not found" ends the check with 127; a
		// test that runs a program the work is to build fails its runner
		// with another status, and is a failure of the work.
		if m := zshNotFound.FindStringSubmatch(output); m != nil {
			return true, notFoundHint(m[1])
		}
		if m := shNotFound.FindStringSubmatch(output); m != nil && !strings.Contains(m[1], "/") {
			return true, notFoundHint(m[1])
		}
		return true, "a program the check starts was not found (exit 127): run the check yourself and install what is missing"
	}
	// A test tool the tests load that is not installed (the project's
	// dependencies are not): not a package the work may be to add.
	for _, re := range []*regexp.Regexp{nodeNoPkg, nodeNoModule} {
		if m := re.FindStringSubmatch(output); m != nil && testTool(m[1]) {
			return true, fmt.Sprintf("the package %s is not installed: run the project's install (npm ci, pnpm install, yarn install) before the loop, or add it as a setup: command", m[1])
		}
	}
	return false, ""
}

// testTool says whether a Node package is test tooling (a runner, an
// assertion or mocking library, a TypeScript loader).
func testTool(pkg string) bool {
	for _, p := range []string{"@jest/", "@vitest/", "@testing-library/", "@types/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	switch pkg {
	case "mocha", "jest", "vitest", "chai", "chai-as-promised", "sinon", "should", "expect", "expect.js", "ava", "tap", "tape", "uvu",
		"ts-jest", "ts-node", "tsx", "babel-jest", "jsdom", "happy-dom", "supertest", "nock", "nyc", "c8", "esm", "@babel/register":
		return true
	}
	return false
}

// MissingModule is the Python module a failed check's output says could
// not be imported at its top ("No module named calc" gives calc), "" when
// it says none.
func MissingModule(output string) string {
	if len(output) > 1<<20 {
		output = output[:1<<20]
	}
	if m := noModule.FindStringSubmatch(output); m != nil {
		return m[1]
	}
	return ""
}

// RunnerMissingLog is RunnerMissing on a check's saved output (its log
// file): the first MiB, where a runner that could not start says so.
func RunnerMissingLog(path string, exit int) (missing bool, hint string) {
	if exit == 0 {
		return false, ""
	}
	f, err := os.Open(path)
	if err != nil {
		return false, ""
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, _ := io.ReadFull(f, buf)
	return RunnerMissing(string(buf[:n]), exit)
}

func notFoundHint(prog string) string {
	switch prog {
	case "jest", "vitest", "mocha", "tsc", "eslint", "ts-node", "tsx", "nyc", "c8":
		return fmt.Sprintf("%s was not found: the project's dependencies are not installed; run npm ci (or pnpm install, yarn install) before the loop, or add it as a setup: command", prog)
	case "pytest":
		return "pytest was not found: install it (python3 -m pip install pytest, or apt-get install python3-pytest)"
	}
	return fmt.Sprintf("%s was not found on PATH: install it, or change the check", prog)
}

// pipName is the name to install a module by: its top package.
func pipName(mod string) string {
	top, _, _ := strings.Cut(mod, ".")
	return top
}

// CheckStart looks past CheckRunnable at a check whose program is there but
// whose runner may not start: `python3 -m pytest` where python3 cannot
// import pytest, `npm test` (pnpm, yarn, bun run) where package.json has no
// such script or the script's program is neither in node_modules/.bin nor
// on PATH. importable says whether an interpreter (as the line names it)
// can import a module; nil skips that check. why is "" when nothing was
// found.
func CheckStart(line, dir, pathEnv string, importable func(python, module string) bool) (why, fix string) {
	p, err := parse(line, "", 0)
	if err != nil {
		return "", ""
	}
	var first *Command
	for i := range p.cmds {
		if !p.cmds[i].Nested {
			first = &p.cmds[i]
			break
		}
	}
	if first == nil || first.Dir == Unknown {
		return "", ""
	}
	words := Unwrap(first.Words)
	if len(words) < 2 || words[0].Dynamic {
		return "", ""
	}
	if first.Dir != "" {
		if filepath.IsAbs(first.Dir) {
			dir = first.Dir
		} else {
			dir = filepath.Join(dir, first.Dir)
		}
	}
	prog := words[0].Text
	base := filepath.Base(prog)
	args := make([]string, 0, len(words)-1)
	for _, w := range words[1:] {
		if w.Dynamic {
			return "", ""
		}
		args = append(args, w.Text)
	}
	switch {
	case pythonName.MatchString(base):
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				mod := args[i+1]
				if importable == nil || importable(prog, mod) {
					return "", ""
				}
				fix := fmt.Sprintf("install it for %s (%s -m pip install %s, or your distribution's python3-%s)", prog, prog, pipName(mod), pipName(mod))
				if _, err := FindProgram(mod, dir, pathEnv); err == nil {
					fix += fmt.Sprintf(", or run the %s program on PATH instead (`%s`), whose interpreter has it", mod, strings.Replace(line, prog+" -m "+mod, mod, 1))
				}
				return fmt.Sprintf("%s cannot import %s (No module named %s): the check's runner cannot start", prog, mod, mod), fix
			}
			if !strings.HasPrefix(a, "-") {
				break // a script: its own imports are the work's
			}
		}
	case base == "npx" || base == "bunx":
		// npx PROG: a program that is not installed is downloaded from the
		// registry at every check (or fails offline).
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				if a == "--" {
					continue
				}
				return "", "" // options (-p PKG …): not read
			}
			if strings.ContainsAny(a, "/@") {
				return "", ""
			}
			if _, err := FindProgram(a, dir, filepath.Join(dir, "node_modules", ".bin")); err == nil {
				return "", ""
			}
			return fmt.Sprintf("%s is not in node_modules/.bin: `%s` would download it from the registry at every check, or fail without the network", a, line),
				fmt.Sprintf("install the project's dependencies (npm ci, pnpm install, yarn install) in %s before the loop, or add it as a setup: command", dir)
		}
	case base == "npm" || base == "pnpm" || base == "yarn" || base == "bun":
		script := scriptName(base, args)
		if script == "" {
			return "", ""
		}
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			return fmt.Sprintf("%s %s needs a package.json in %s, and there is none", base, script, dir), "run the check in the project's folder (cd DIR && …), or correct it"
		}
		var pj struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(data, &pj) != nil {
			return "", ""
		}
		body, ok := pj.Scripts[script]
		if !ok {
			return fmt.Sprintf("package.json has no %q script, so `%s` cannot start", script, line),
				fmt.Sprintf("add a %q script to package.json (the command that runs the tests), or change the check", script)
		}
		sp, err := parse(body, "", 0)
		if err != nil || len(sp.cmds) == 0 {
			return "", ""
		}
		sw := Unwrap(sp.cmds[0].Words)
		if len(sw) == 0 || sw[0].Dynamic || shellBuiltins[sw[0].Text] || strings.Contains(sw[0].Text, "/") || sp.cmds[0].Dir != "" {
			return "", ""
		}
		sprog := sw[0].Text
		if _, err := FindProgram(sprog, dir, filepath.Join(dir, "node_modules", ".bin")+string(filepath.ListSeparator)+pathEnv); err == nil {
			return "", ""
		}
		return fmt.Sprintf("the %q script runs %s, which is neither in node_modules/.bin nor on PATH: the project's dependencies are not installed", script, sprog),
			fmt.Sprintf("run %s install (npm ci for a package-lock.json) in %s before the loop, or add it as a setup: command", base, dir)
	}
	return "", ""
}

var pythonName = regexp.MustCompile(`^python(?:\d+(?:\.\d+)?)?$`)

// scriptName is the package.json script a package manager's arguments run.
func scriptName(pm string, args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch args[0] {
	case "test", "t", "tst":
		if pm == "bun" {
			return "" // bun test is bun's own runner
		}
		return "test"
	case "run", "run-script", "rum", "urn":
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				return a
			}
		}
		return ""
	}
	if pm == "yarn" && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "install", "add", "remove", "upgrade", "why", "info", "init", "dlx", "exec", "node", "workspace", "workspaces":
			return ""
		}
		return args[0]
	}
	return ""
}
