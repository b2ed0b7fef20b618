package judge

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Flaky checks are named, never trusted. A check whose result changes
// between two runs on the same tree — it passed in the loop folder and
// fails in the clean room with nothing set aside, or a re-run under
// flaky: rerun N gives another verdict — is recorded as flaky (a "flaky"
// record, with the tests that flipped), kept in the loop's state for
// status and the report, and judged as the loop file says: fail (the
// default: a flaky result counts as failing), rerun N (a gate's check
// passes only if all N runs pass), quarantine (the tests that flipped are
// left out of the verdict and the counts, and DONE is NOT VERIFIED for
// them). The failure signal says the check is flaky, so that no agent is
// sent after a bug that is not there.

// FlakyTests is the flaky checks seen so far: the tests that flipped, by
// command (an empty list: the check flipped but its output names no test).
type FlakyTests map[string][]string

// flakyKnown is the flaky checks the loop saw.
func (j *Judge) flakyKnown() FlakyTests {
	if j.Flaky != nil {
		return j.Flaky()
	}
	return j.flaky
}

// Flipped names the tests whose result differs between two runs of a
// check: failing in one and not in the other.
func Flipped(a, b CheckResult) []string {
	var out []string
	for _, n := range a.Failed {
		if !slices.Contains(b.Failed, n) {
			out = append(out, n)
		}
	}
	for _, n := range b.Failed {
		if !slices.Contains(a.Failed, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// noteFlaky records a check seen flaky (where: clean_room, rerun), with
// the tests that flipped, and keeps it for status and the report.
func (j *Judge) noteFlaky(gate, where, cmd string, tests []string) {
	what := "the tests that flipped are not named in its output"
	if len(tests) > 0 {
		what = "tests that flipped: " + strings.Join(tests, ", ")
	}
	how := "passed in the loop folder and failed when run again on the same tree in the clean room"
	if where == "rerun" {
		how = "gave another result when run again on the same tree"
	}
	msg := fmt.Sprintf("`%s` %s: it is flaky (%s)", cmd, how, what)
	j.emit(record.Event{Event: record.Flaky, Gate: gate, Kind: where, Message: msg, Flipped: tests})
	j.addEvidence(fmt.Sprintf("%s gate: FLAKY `%s` (%s)", gate, cmd, what))
	if j.NoteFlaky != nil {
		j.NoteFlaky(cmd, tests)
		return
	}
	if j.flaky == nil {
		j.flaky = FlakyTests{}
	}
	for _, t := range tests {
		if !slices.Contains(j.flaky[cmd], t) {
			j.flaky[cmd] = append(j.flaky[cmd], t)
		}
	}
	if _, ok := j.flaky[cmd]; !ok {
		j.flaky[cmd] = nil
	}
}

// flakyAdvice is what the failure signal says of a flaky check.
func flakyAdvice(mode string, runs int) string {
	why := "a flaky result counts as failing (flaky: fail)"
	if mode == spec.FlakyRerun {
		why = fmt.Sprintf("a check passes only if all %d runs pass (flaky: rerun %d)", runs, runs)
	}
	return "Its result cannot be trusted: " + why + ", so the loop cannot end DONE on it. The failure is not evidence of a defect in your work: do not chase a bug that is not there. The test itself is unstable; a person must make it deterministic or quarantine it (flaky: quarantine)."
}

// judgingGate says whether gate judges the work (rerun N applies): not
// setup, the baseline or a task's own checks.
func judgingGate(gate string) bool {
	switch gate {
	case "setup", "baseline", "task":
		return false
	}
	return true
}

// rerunFlaky runs each check of a judging gate again, under flaky: rerun
// N, until it has run N times or its result changed: a check passes only
// if all N runs pass, and one whose result changed is flaky.
func (j *Judge) rerunFlaky(ctx context.Context, gate string, results []CheckResult, logPath func(i, run int) string) {
	l := j.spec()
	mode, runs := l.FlakyRule()
	if mode != spec.FlakyRerun || !judgingGate(gate) {
		return
	}
	for i := range results {
		first := results[i]
		for run := 2; run <= runs && ctx.Err() == nil; run++ {
			// As the first run: holdout files hidden.
			rs := j.runVisibleChecks(ctx, []string{first.Command}, func(int) string { return logPath(i, run) })
			if len(rs) == 0 {
				break
			}
			again := rs[0]
			if again.Pass == first.Pass {
				if !again.Pass {
					break // failing for real: no need for all N runs
				}
				continue
			}
			failing := first
			if !again.Pass {
				failing = again
			}
			tests := Flipped(first, again)
			j.noteFlaky(gate, "rerun", first.Command, tests)
			head := fmt.Sprintf("FLAKY: `%s` passed and failed on the same tree in %d runs (tests that flipped: %s). %s", first.Command, run, orNone(tests), flakyAdvice(mode, runs))
			failing.Pass, failing.Check.Pass = false, false
			failing.Lines = append([]string{head}, failing.Lines...)
			failing.Signal = strings.TrimSpace(head + "\n" + failing.Signal)
			results[i] = failing
			break
		}
	}
}

// markKnownFlaky says, in the signal of a failing check seen flaky
// before, that it is flaky and which of its failing tests flipped then.
func (j *Judge) markKnownFlaky(results []CheckResult) {
	known := j.flakyKnown()
	mode, runs := j.spec().FlakyRule()
	for i := range results {
		r := &results[i]
		tests, ok := known[r.Command]
		if r.Pass || !ok || strings.HasPrefix(r.Signal, "FLAKY:") {
			continue
		}
		var again []string
		for _, n := range r.Failed {
			if slices.Contains(tests, n) {
				again = append(again, n)
			}
		}
		if len(tests) > 0 && len(again) == 0 {
			continue // it fails on other tests: that is no flake
		}
		head := fmt.Sprintf("FLAKY: `%s` was seen flaky before on this loop (tests that flipped on the same tree: %s). %s", r.Command, orNone(tests), flakyAdvice(mode, runs))
		r.Lines = append([]string{head}, r.Lines...)
		r.Signal = strings.TrimSpace(head + "\n" + r.Signal)
	}
}

func orNone(tests []string) string {
	if len(tests) == 0 {
		return "none named in its output"
	}
	return strings.Join(tests, ", ")
}

// rerunLog is where the run-th run of check i of a gate keeps its output.
func (j *Judge) rerunLog(stamp, gate string) func(i, run int) string {
	dir := loopdir.Dir(j.Dir).Checks()
	cycle, iteration := j.stamp()
	return func(i, run int) string {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%d-run%d.log", stamp, cycle, iteration, gate, i+1, run))
	}
}

// ApplyQuarantine, under flaky: quarantine, lets a check pass whose every
// failing test is one that flipped before (a failure the output does not
// pin to named tests is never excused); it returns the NOT VERIFIED notes
// of the tests so left out.
func (j *Judge) ApplyQuarantine(results []CheckResult) []string {
	if mode, _ := j.spec().FlakyRule(); mode != spec.FlakyQuarantine {
		return nil
	}
	known := j.flakyKnown()
	var notes []string
	for i := range results {
		r := &results[i]
		q := known[r.Command]
		if r.Pass || len(q) == 0 || len(r.Failed) == 0 || r.FailedMore > 0 || r.TimedOut || !r.Tests.Known || r.Tests.Failed > len(r.Failed) {
			continue
		}
		all := true
		for _, n := range r.Failed {
			if !slices.Contains(q, n) {
				all = false
			}
		}
		if !all {
			continue
		}
		r.Pass, r.Check.Pass = true, true
		r.Signal, r.Lines = "", nil
		note := fmt.Sprintf("flaky tests quarantined (flaky: quarantine): %s of `%s` failed and were left out; DONE does not verify them", strings.Join(r.Failed, ", "), r.Command)
		j.addNotVerified(note)
		notes = append(notes, note)
	}
	return notes
}

// quarantinedCount is how many tests of cmd are quarantined: the ratchet
// leaves them out of the baseline's passing count.
func (j *Judge) quarantinedCount(cmd string) int {
	if mode, _ := j.spec().FlakyRule(); mode != spec.FlakyQuarantine {
		return 0
	}
	return len(j.flakyKnown()[cmd])
}
