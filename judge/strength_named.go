package judge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/testcount"
)

// A mutant is caught only when a test fails by its name: a test of the
// loop's own (as it started: the clean room's tree, with the test files
// the agent added set aside) or of the holdout, named in the runner's
// output. A check that fails without naming one — a panic while the
// package initialises, code of the agent's that exits when the source it
// embeds changed, a failure no test claims — did not catch the mutant: it
// survived. A Go failure counts only when the engine's test main (the
// clean room's accounting, goaccount.go) reported that the testing
// package failed: a run that ended before the tests, whatever it printed,
// caught nothing. A check whose output shows no test runner at all (a
// shell line such as `test -s out.txt`) is judged by its exit status.

// mutantFailure judges a failing check's output on a mutant: caught,
// survived, or not compiled (neither).
func (j *Judge) mutantFailure(out []byte, known map[string]bool, acct *goAccount) mutantResult {
	p, _ := testcount.NewParser(j.spec().TestSummaries)
	for _, line := range bytes.Split(out, []byte("\n")) {
		p.Line(line)
	}
	fs, _ := p.Failures()
	named, goRun := false, false
	for _, f := range fs {
		if strings.HasPrefix(f.Runner, "go") {
			goRun = true
			if knownGoTest(f.Name, known) {
				named = true
			}
			continue
		}
		named = true // another runner: the agent's test files are set aside
	}
	switch {
	case notCompiled.Match(out) && !named:
		return mutantNotCompiled
	case goRun && named && acct != nil && len(acct.dirs) > 0:
		codes, nofile := acct.records(out)
		for d, cs := range codes {
			if acct.dirs[d] && nonZero(cs) {
				return mutantCaught
			}
		}
		if nofile {
			return mutantCaught // no accounting could be kept: the names decide
		}
		return mutantSurvived // the names were printed before the tests ran
	case named:
		return mutantCaught
	case len(fs) == 0 && !p.Counts().Known && !goOutput(out):
		return mutantCaught // no test runner: the exit status decides
	}
	return mutantSurvived
}

// knownGoTest says whether a go failure's name (qualified by its package:
// "example.com/add.TestAdd", "example.com/add.TestAdd/case") is a test
// function of known.
func knownGoTest(name string, known map[string]bool) bool {
	for k := range known {
		if name == k || strings.HasSuffix(name, "."+k) || strings.Contains(name, "."+k+"/") || strings.HasPrefix(name, k+"/") {
			return true
		}
	}
	return false
}

// goOutput says whether out is go test's (a package's FAIL or ok line).
func goOutput(out []byte) bool {
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("FAIL\t")) || goOK.Match(line) || bytes.HasPrefix(line, []byte("panic: ")) {
			return true
		}
	}
	return false
}

// strengthAccount is the Go accounting of a strength pass (nil when the
// loop holds no Go test), with the known test names.
func (j *Judge) strengthAccount() (*goAccount, map[string]bool) {
	return j.newGoAccount(append(j.startFiles(), j.holdouts...)), j.goTestNames()
}

// placeAccount writes the accounting's test mains into a copy of the tree.
func placeAccount(a *goAccount, room string) {
	if a == nil {
		return
	}
	for _, f := range a.put {
		if data, err := os.ReadFile(f.From); err == nil {
			to := filepath.Join(room, filepath.FromSlash(f.To))
			os.MkdirAll(filepath.Dir(to), 0o755)
			os.WriteFile(to, data, 0o644)
		}
	}
}

// strengthCtx carries the pass's accounting and known names to its runners.
type strengthCtx struct {
	acct  *goAccount
	known map[string]bool
	cpu   *cpuTally // the CPU of the pass's checks
}

type strengthKey struct{}

func strengthOf(ctx context.Context) strengthCtx {
	s, _ := ctx.Value(strengthKey{}).(strengthCtx)
	return s
}
