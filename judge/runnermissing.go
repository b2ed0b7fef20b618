package judge

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/looprinter/looprinter/checkcmd"
)

// RunnerCannotStart reads the output of the baseline's failing checks and
// says which of them failed because their test runner (or a module or
// script it needs) could not start — `No module named pytest`, `command not
// found` (exit 127), a missing npm script — with what to install ("" when
// none did). Such a check judged nothing and no agent run can fix it: the
// loop stops BLOCKED before any agent run. Read it at the baseline only:
// later, the agent's code could print any of those lines.
func (j *Judge) RunnerCannotStart(results []CheckResult) string {
	var cannot []string
	for _, r := range results {
		if r.NegatedNotRun != "" {
			cannot = append(cannot, fmt.Sprintf("the negated check `%s` cannot fail: %s; make the command it negates able to run (or check for it first: `git rev-parse --git-dir && ! git grep …`)", r.Command, r.NegatedNotRun))
			continue
		}
		if r.Pass || r.TimedOut || r.Output == "" || FailuresAsExit(r) {
			continue
		}
		missing, hint := checkcmd.RunnerMissingLog(r.Output, r.ExitCode)
		if !missing {
			if why := j.notCollected(r); why != "" {
				cannot = append(cannot, why)
			}
			continue
		}
		if mod := missingModuleLog(r.Output); mod != "" {
			top, _, _ := strings.Cut(mod, ".")
			if j.Spec != nil && namesWord(j.Spec().Objective, top) {
				// `python3 -m calc` where the work is to write calc: the
				// objective names it, so its absence is the work's.
				continue
			}
			hint += fmt.Sprintf("; if the loop's work is to write the module %s, name it in the objective", top)
		}
		cannot = append(cannot, fmt.Sprintf("the check `%s` cannot start its test runner (exit %d): %s", r.Command, r.ExitCode, hint))
	}
	if len(cannot) == 0 {
		return ""
	}
	return strings.Join(cannot, "\n") + "\n(no agent ran: a check whose runner cannot start or collect its tests judges nothing, and no change to the code can fix it; fix the environment or the check and run again)"
}

// FailuresAsExit says whether a check's exit 126 or 127 is its runner's
// count of failing tests (mocha exits with it: 127 failing tests, exit
// 127), not the shell's "cannot execute" or "not found": the tests ran.
func FailuresAsExit(r CheckResult) bool {
	return (r.ExitCode == 126 || r.ExitCode == 127) && r.Tests.Failed == r.ExitCode
}

// notCollected says why a failing baseline check's runner could not
// collect its tests (NotCollected), "" when it could.
func (j *Judge) notCollected(r CheckResult) string {
	objective := ""
	if j.Spec != nil {
		objective = j.Spec().Objective
	}
	out := readLog(r.Output)
	if why := NotCollected(r.Command, out, r.ExitCode, j.Dir, objective); why != "" {
		return why
	}
	if j.Spec == nil {
		return ""
	}
	return CannotBuild(r.Command, out, r.ExitCode, j.Dir, j.Spec())
}

// NotCollected says why a check that failed with output and exit, in the
// folder dir, could not collect its tests (checkcmd.CouldNotCollect), with
// what to do; "" when it could, or when what it missed is what the
// objective says to write (a module, a test file) or the objective is to
// write tests.
func NotCollected(command, output string, exit int, dir, objective string) string {
	nc, ok := checkcmd.CouldNotCollect(output, exit, dir)
	if !ok {
		return ""
	}
	if nc.Missing != "" {
		names := []string{nc.Missing}
		if i := strings.LastIndexAny(nc.Missing, "/\\"); i >= 0 {
			names = append(names, nc.Missing[i+1:]) // a file: its name
		} else {
			names = append(names, strings.Split(nc.Missing, ".")...) // a module: its parts
		}
		for _, n := range names {
			if namesWord(objective, n) {
				return "" // the work is to write it
			}
		}
	}
	if nc.Fix == checkcmd.NoTestsFix && writesTests.MatchString(objective) {
		return ""
	}
	return fmt.Sprintf("the check `%s` could not collect its tests (exit %d): %s; %s", command, exit, nc.Why, nc.Fix)
}

// writesTests is an objective that says to write tests.
var writesTests = regexp.MustCompile(`(?i)\b(?:write|add|create|cover)\b[^.;]*\btests?\b`)

// readLog is the first MiB of a check's saved output.
func readLog(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20)) // no MiB allocated for a short log
	return string(b)
}

// missingModuleLog is checkcmd.MissingModule on a check's saved output.
func missingModuleLog(path string) string { return checkcmd.MissingModule(readLog(path)) }

// namesWord says whether text holds word as a word of its own (letters,
// digits and underscores on neither side): "write calc.py" names calc,
// "calculator" does not.
func namesWord(text, word string) bool {
	if word == "" {
		return false
	}
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		k := strings.Index(text[i:], word)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(word)
		if (k == 0 || !isWord(text[k-1])) && (end == len(text) || !isWord(text[end])) {
			return true
		}
		i = k + 1
	}
}
