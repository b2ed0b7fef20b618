package initwiz

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// runnerFlags are the options a check or a package.json script gives its
// JavaScript test runner (runner: mocha, jest, vitest), for the holdout
// check, which names its own files: `mocha --ui qunit test/` gives
// [--ui qunit]. Left out: the files, folders and globs it runs, vitest's
// run and watch words, options that watch, and everything after the
// runner's own command (&&, ;, |).
func runnerFlags(dir, line, runner string) []string {
	if runner == "" || line == "" {
		return nil
	}
	words := strings.Fields(line)
	start := -1
	for i, w := range words {
		if path.Base(strings.Trim(w, `'"`)) == runner {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []string
	for i := start; i < len(words); i++ {
		w := words[i]
		if shellOperator[w] || strings.ContainsAny(w, "&;|<>`$") {
			break
		}
		if !strings.HasPrefix(w, "-") {
			if runner == "vitest" && (w == "run" || w == "watch") && i == start {
				continue
			}
			continue // a file, folder or glob: the holdout names its own
		}
		name := strings.SplitN(w, "=", 2)[0]
		takes := valueFlags[runner][name] && !strings.Contains(w, "=")
		if watchFlag[runner][name] || runner == "jest" && w == "--runTestsByPath" || fileFlags[name] {
			if takes || fileFlags[name] && !strings.Contains(w, "=") {
				i++ // its value goes with it
			}
			continue
		}
		out = append(out, w)
		// The option's value: the next word of an option known to take
		// one, or of an unknown option a word that is not a path the
		// runner runs (it exists, or names a test file, a folder or a glob).
		if i+1 < len(words) && !shellOperator[words[i+1]] && (takes ||
			!strings.Contains(w, "=") && !strings.HasPrefix(words[i+1], "-") && !looksLikeTestPath(dir, words[i+1]) && !booleanFlag[w]) {
			out = append(out, words[i+1])
			i++
		}
	}
	return out
}

var shellOperator = map[string]bool{"&&": true, "||": true, ";": true, "|": true, "&": true}

// watchFlag are options that keep a runner waiting for changes.
var watchFlag = map[string]map[string]bool{
	"mocha":  {"--watch": true, "-w": true, "--watch-files": true, "--watch-ignore": true},
	"jest":   {"--watch": true, "--watchAll": true},
	"vitest": {"--watch": true, "-w": true},
}

// fileFlags name the files to run: the holdout check names its own.
var fileFlags = map[string]bool{"--spec": true, "--testPathPattern": true, "--testMatch": true}

// valueFlags are the runners' options that take a value in the next word.
var valueFlags = map[string]map[string]bool{
	"mocha": {"--ui": true, "-u": true, "--require": true, "-r": true, "--timeout": true, "-t": true, "--reporter": true, "-R": true,
		"--reporter-option": true, "-O": true, "--config": true, "--package": true, "--extension": true, "--ignore": true, "--exclude": true,
		"--file": true, "--grep": true, "-g": true, "--fgrep": true, "-f": true, "--slow": true, "-s": true, "--retries": true,
		"--jobs": true, "-j": true, "--node-option": true, "-n": true, "--loader": true, "--import": true, "--watch-files": true, "--watch-ignore": true},
	"jest": {"--config": true, "-c": true, "--testEnvironment": true, "--env": true, "--rootDir": true, "--roots": true, "--preset": true,
		"--testTimeout": true, "--maxWorkers": true, "-w": true, "--setupFiles": true, "--setupFilesAfterEnv": true, "--reporters": true,
		"--testNamePattern": true, "-t": true, "--selectProjects": true, "--shard": true},
	"vitest": {"--environment": true, "--config": true, "-c": true, "--root": true, "-r": true, "--dir": true, "--reporter": true,
		"--pool": true, "--project": true, "--testNamePattern": true, "-t": true, "--mode": true, "--shard": true},
}

// booleanFlag are common options of mocha, jest and vitest that take no
// value: the word after them is the runner's file.
var booleanFlag = map[string]bool{"--recursive": true, "--exit": true, "--bail": true, "-b": true, "--ci": true, "--silent": true,
	"--verbose": true, "--coverage": true, "--passWithNoTests": true, "--no-coverage": true, "--forbid-only": true,
	"--check-leaks": true, "--full-trace": true, "--parallel": true, "-p": true, "--sort": true, "--runInBand": true, "-i": true,
	"--detectOpenHandles": true, "--forceExit": true, "--globals": false}

var testPathWord = regexp.MustCompile(`[/*]|\.(?:[cm]?[jt]sx?)$`)

func looksLikeTestPath(dir, w string) bool {
	w = strings.Trim(w, `'"`)
	if testPathWord.MatchString(w) {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, w))
	return err == nil
}

// rustTestTarget is the cargo integration test a file is (tests/NAME.rs
// or tests/NAME/main.rs next to a Cargo.toml), "" for any other file.
// Inline #[cfg(test)] tests live in the code and cannot be set aside.
func rustTestTarget(dir, rel string) string {
	parts := strings.Split(rel, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] != "tests" {
			continue
		}
		crate := strings.Join(parts[:i], "/")
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(crate), "Cargo.toml")); err != nil {
			return ""
		}
		rest := parts[i+1:]
		switch {
		case len(rest) == 1 && strings.HasSuffix(rest[0], ".rs"):
			return crateArg(crate) + strings.TrimSuffix(rest[0], ".rs")
		case len(rest) == 2 && rest[1] == "main.rs":
			return crateArg(crate) + rest[0]
		}
		return ""
	}
	return ""
}

// crateArg is the --manifest-path of a crate below the loop's folder, the
// test target's name after a tab (HoldoutVerify splits them).
func crateArg(crate string) string {
	if crate == "" {
		return "\t"
	}
	return crate + "/Cargo.toml\t"
}

// rustHoldoutChecks are the commands that run the holdout integration
// tests: `cargo test --test NAME`, one a crate.
func rustHoldoutChecks(targets []string) []string {
	var order []string
	byCrate := map[string][]string{}
	for _, t := range targets {
		crate, name, _ := strings.Cut(t, "\t")
		if byCrate[crate] == nil {
			order = append(order, crate)
		}
		byCrate[crate] = append(byCrate[crate], name)
	}
	var out []string
	for _, c := range order {
		cmd := "cargo test"
		if c != "" {
			cmd += " --manifest-path " + c
		}
		for _, n := range byCrate[c] {
			cmd += " --test " + n
		}
		out = append(out, cmd)
	}
	return out
}

// failingNamed are the test files (of files) that the failing checks'
// output names (its path, or its name where no other test file has it;
// for Go, a test function of it the output names as failing): the test
// that fails before the loop is the loop's target, and stays in sight.
func failingNamed(dir string, files []string, output string) map[string]string {
	out := map[string]string{}
	if strings.TrimSpace(output) == "" {
		return out
	}
	bases := map[string]int{}
	for _, f := range files {
		bases[path.Base(f)]++
	}
	const why = "a test that fails before the loop is in it"
	for _, f := range files {
		b := path.Base(f)
		if pathNamed(output, f) || bases[b] == 1 && pathNamed(output, b) {
			out[f] = why
			continue
		}
		if strings.HasSuffix(f, ".go") {
			for _, fn := range goTests(filepath.Join(dir, filepath.FromSlash(f))) {
				if regexp.MustCompile(`\.` + regexp.QuoteMeta(fn) + `(?:/|\s|$)`).MatchString(output) {
					out[f] = why + fmt.Sprintf(" (%s)", fn)
					break
				}
			}
		}
	}
	return out
}

// pathNamed says whether text names p as a path of its own: not inside a
// longer name (a slash before it is a longer path that ends in it).
func pathNamed(text, p string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], p)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(p)
		before := j == 0 || !isNameByte(text[j-1]) || text[j-1] == '/'
		if before && (end == len(text) || !isNameByte(text[end]) || text[end] == '/') {
			return true
		}
		i = j + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// CommitHint says how to commit the new loop file (and .gitignore) when
// dir is in a git work tree where git does not track it yet: a loop's
// first run warns about an uncommitted loop file, and its commits take the
// whole folder. "" outside git, or when it is committed.
func CommitHint(dir, loopFile string) string {
	top := gitTop(dir)
	if top == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, loopFile)
	if err != nil {
		return ""
	}
	if st, err := git(dir, "status", "--porcelain", "--", rel, ".gitignore"); err != nil || st == "" {
		return ""
	}
	return fmt.Sprintf("Commit it before the first run (which warns about an uncommitted loop file): git add %s .gitignore && git commit -m \"looprinter: the loop file\"", rel)
}
