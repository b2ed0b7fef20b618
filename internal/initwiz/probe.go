package initwiz

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/detect"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/testcount"
)

// ProbeTimeout is the longest init lets a check run once: the loop's own
// check_timeout applies to the loop's runs.
const ProbeTimeout = 3 * time.Minute

// Ran is one run of a check that init made, to show the user what it found.
type Ran struct {
	Command  string
	Exit     int
	Duration time.Duration
	TimedOut bool
	Tests    testcount.Counts
	// Output is the check's output (or its failure signal), read for a
	// runner that could not start or collect its tests.
	Output string
	// Dir is the loop's folder and Objective its objective, for telling
	// the project's own package that cannot be imported from a module the
	// work is to write.
	Dir, Objective string
}

// RanReport says what one run of a check found: the line to show ("ran
// `npm test` once: exit 1 in 2.4s; mocha: 3 passed, 1 failed") and the
// warnings: a runner that could not start (the loop would stop BLOCKED),
// test counts that cannot be read (the passing-count rule is off for it),
// with the flags that would make them readable.
func RanReport(r Ran) (line string, warnings []string) {
	line = fmt.Sprintf("ran `%s` once: exit %d in %s", r.Command, r.Exit, r.Duration.Round(100*time.Millisecond))
	if r.TimedOut {
		line = fmt.Sprintf("ran `%s` once: stopped after %s, before it ended (the loop gives it check_timeout)", r.Command, r.Duration.Round(time.Second))
	}
	if r.Tests.Known {
		line += "; " + r.Tests.String()
		if len(r.Tests.PassedNames) == 0 && r.Tests.Passed > 0 {
			if how := nameFlags[r.Tests.Runner]; how != "" {
				line += " (counted, not named: " + how + " would name each test, so that a dropped one is named)"
				if named := NamedCommand(r.Command, r.Tests.Runner); named != "" {
					line += fmt.Sprintf("; init leaves the check as it is: to have them named, pass --verify %q (or edit the loop file)", named)
				}
			}
		}
	}
	if missing, hint := checkcmd.RunnerMissing(r.Output, r.Exit); missing && !(r.Exit == 126 || r.Exit == 127) || missing && !strings.HasPrefix(hint, "a program the check starts") {
		warnings = append(warnings, fmt.Sprintf("the check `%s` could not start its runner: %s. `looprinter run` would stop BLOCKED before any agent run", r.Command, hint))
		return line, warnings
	}
	if why := judge.NotCollected(r.Command, r.Output, r.Exit, r.Dir, r.Objective); why != "" {
		warnings = append(warnings, why+". `looprinter run` would stop BLOCKED before any agent run")
		return line, warnings
	}
	if r.Exit == 0 && r.Tests.NoTests {
		warnings = append(warnings, fmt.Sprintf("the check `%s` exited 0 having run no tests: its pass shows nothing about the work, and a loop could not end DONE on it (NOT VERIFIED); write or select the tests it should run", r.Command))
		return line, warnings
	}
	if !r.Tests.Known && looksLikeTests(r.Command) {
		w := fmt.Sprintf("the test counts of `%s` cannot be read from its output, so the rule that the passing count never drops is off for it", r.Command)
		if how := CountFlags(r.Command); how != "" {
			w += ": " + how
		} else {
			w += "; make it print a summary looprinter reads (pytest, unittest, go test -v, jest, vitest, mocha, node --test, cargo test, TAP), or add a test_summaries pattern to the loop file"
		}
		warnings = append(warnings, w)
	}
	return line, warnings
}

// nameFlags are the flags that make a runner name its passing tests.
var nameFlags = map[string]string{
	"pytest":   "-v or -rA",
	"unittest": "-v",
	"jest":     "--verbose",
	"vitest":   "--reporter=verbose",
	"mocha":    "--reporter tap",
	"node":     "--test-reporter=tap",
}

// looksLikeTests says whether a check line runs tests (and so should
// print counts): a test runner or a package manager's test script.
func looksLikeTests(cmd string) bool {
	f := " " + strings.Join(strings.Fields(cmd), " ") + " "
	for _, w := range []string{"go test ", "npm test ", "npm t ", "pnpm test ", "yarn test ", "run test ", "pytest", "unittest", "jest ", "vitest", "mocha", "--test", "cargo test ", "make test ", " tox ", " nox "} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

// goTestWord is `go test` as a command of its own, not the end of
// `cargo test`.
var goTestWord = regexp.MustCompile(`(?:^|[\s;&|(])go\s+test\b`)

// CountFlags says which flags make a runner's counts readable, for a
// command whose output showed none; "" when there is no known flag.
func CountFlags(cmd string) string {
	switch {
	case goTestWord.MatchString(cmd):
		return "add -v (or -json): plain `go test` prints no passing tests"
	case strings.Contains(cmd, "pytest"):
		return "drop -qq (pytest -qq prints no summary line); -q or -v print it"
	case strings.Contains(cmd, "mocha"):
		return "use mocha's spec (the default) or tap reporter: --reporter spec"
	}
	switch detect.NodeRunner(cmd) {
	case "jest":
		return "jest prints its \"Tests:\" summary unless --silent or a custom reporter hides it; add --verbose for the tests' names"
	case "vitest":
		return "use vitest's default or verbose reporter: --reporter=verbose"
	}
	return ""
}

// HoldoutRunWarning says what is wrong with a holdout check that init ran
// once: it ran no test, or it failed without naming a failing test (a
// runner that could not load the files, `suite is not defined`), so that
// it may never pass; "" when it ran tests.
func HoldoutRunWarning(command string, exit int, tests testcount.Counts, failed int, signal string) string {
	first := strings.TrimSpace(signal)
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	switch {
	case tests.NoTests || tests.Known && tests.Passed+tests.Failed == 0:
		return fmt.Sprintf("the holdout check `%s` ran no test: the loop could never show the holdout tests pass; correct it in holdout_verify", command)
	case exit != 0 && failed == 0 && (!tests.Known || tests.Failed == 0):
		return fmt.Sprintf("the holdout check `%s` failed (exit %d) without a failing test: it may never pass, and the loop would never reach DONE; run it yourself and correct it in holdout_verify (its output: %s)", command, exit, first)
	}
	return ""
}

// NamedCommand is the check with the flag that makes its runner name each
// passing test (nameFlags), offered to the user, never written by init;
// "" when it is not known where the flag goes.
func NamedCommand(cmd, runner string) string {
	flag := map[string]string{"pytest": "-rA", "unittest": "-v", "jest": "--verbose", "vitest": "--reporter=verbose", "mocha": "--reporter tap", "node": "--test-reporter=tap"}[runner]
	if flag == "" || strings.ContainsAny(cmd, "|;&<>`$") {
		return ""
	}
	f := strings.Fields(cmd)
	if runner == "unittest" {
		for i, w := range f {
			if w == "unittest" {
				return strings.Join(append(append(append([]string{}, f[:i+1]...), flag), f[i+1:]...), " ")
			}
		}
		return ""
	}
	if len(f) > 1 && (f[0] == "npm" || f[0] == "pnpm" || f[0] == "yarn" || f[0] == "bun") {
		if slices.Contains(f, "--") {
			return cmd + " " + flag
		}
		return cmd + " -- " + flag
	}
	return cmd + " " + flag
}
