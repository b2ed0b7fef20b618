package judge

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/testcount"
)

// Honest gates. A loop is only as good as its checks, so the engine holds
// the checks themselves to account: a check that cannot run stops the loop
// before any agent is paid; checks that already pass before any agent run
// stop it too (they cannot tell the agent's work from no work); an
// objective that never failed is not verified; and the number of passing
// tests may never drop below what it was, nor the skipped ones rise.

func vacuousNote(check, why string) string {
	return fmt.Sprintf("the check `%s` cannot fail (%s)", check, why)
}

// RefreshVacuous brings the NOT VERIFIED notes about checks that cannot
// fail up to the loop file in force: of notVerified, it returns those to
// keep (a check fixed or removed since is no longer listed) and, once the
// baseline is done, the notes to add (a check added since that cannot fail).
func (j *Judge) RefreshVacuous(notVerified []string, baselineDone bool) (keep, add []string) {
	want := map[string]bool{}
	for _, c := range j.spec().GateChecks() {
		if why, vacuous := checkcmd.VacuousCheck(c); vacuous {
			want[vacuousNote(c, why)] = true
		}
	}
	checks := j.spec().GateChecks()
	for _, n := range notVerified {
		if strings.HasPrefix(n, "the check `") && strings.Contains(n, "` cannot fail (") && !want[n] {
			continue // the check was fixed or removed
		}
		if c, ok := noTestsNoteCheck(n); ok && !slices.Contains(checks, c) {
			continue // the check that ran no tests was removed
		}
		keep = append(keep, n)
	}
	if baselineDone {
		for n := range want {
			add = append(add, n)
		}
	}
	return keep, add
}

// CannotRun judges the baseline's results for checks that cannot run (the
// program not found or not executable): the message that blocks the loop,
// each with its fix where one is known; "" when every check ran.
func (j *Judge) CannotRun(results []CheckResult) string {
	l := j.spec()
	var cannot []string
	for _, r := range results {
		key := "verify"
		if !slices.Contains(l.Verify, r.Command) {
			key = "objective_verify"
		}
		if r.Pass || r.NegatedNotRun != "" {
			// A negated program not there: said with its fix (the output's
			// line, read by RunnerCannotStart, says less).
			if prog, why := checkcmd.NegatedCannotRun(r.Command, j.Dir, os.Getenv("PATH")); why != "" {
				cannot = append(cannot, fmt.Sprintf("the check `%s` cannot run: %s\nfix: %s", r.Command, why, checkcmd.RunFix(prog, "program "+prog+" not found on PATH", key)))
			}
			continue
		}
		if r.ExitCode != 126 && r.ExitCode != 127 || FailuresAsExit(r) {
			continue
		}
		if why := confinementFailure(r); why != "" {
			cannot = append(cannot, confinementMessage(r.Command, why))
			continue
		}
		why, fix, ok := checkcmd.ExitHint(r.Command, j.Dir, os.Getenv("PATH"), r.ExitCode, key)
		if !ok {
			why = fmt.Sprintf("it exited %d (the program was not found or cannot be executed)", r.ExitCode)
		}
		msg := fmt.Sprintf("the check `%s` cannot run: %s", r.Command, why)
		if fix != "" {
			msg += "\nfix: " + fix
		}
		cannot = append(cannot, msg)
	}
	if len(cannot) > 0 {
		return strings.Join(cannot, "\n") + "\n(no agent ran: a check that cannot run cannot judge one)"
	}
	return ""
}

// NoteVacuous names the gate checks that cannot fail: a warning each, and
// a NOT VERIFIED note.
func (j *Judge) NoteVacuous() {
	for _, c := range j.spec().GateChecks() {
		if why, vacuous := checkcmd.VacuousCheck(c); vacuous {
			j.emit(record.Event{Event: record.Warning, Kind: "vacuous_check", Message: fmt.Sprintf("the check `%s` cannot fail: %s", c, why)})
			j.addNotVerified(vacuousNote(c, why))
		}
	}
}

func (j *Judge) loadTestBase() map[string]testcount.Counts {
	out := map[string]testcount.Counts{}
	if data, err := os.ReadFile(loopdir.Private(j.Priv).TestsBaseline()); err == nil {
		json.Unmarshal(data, &out)
	}
	return out
}

// SaveTestBase records the test results of checks whose output could be
// read; with raise, only results that pass at least as many tests replace
// the stored ones (the ratchet only goes up).
func (j *Judge) SaveTestBase(results []CheckResult, raise bool) {
	base := j.loadTestBase()
	changed := false
	for _, r := range results {
		if !r.Tests.Known {
			continue
		}
		if old, ok := base[r.Command]; raise && ok && (r.Tests.Passed < old.Passed || r.Tests.Skipped > old.Skipped) {
			continue
		}
		base[r.Command] = r.Tests
		changed = true
	}
	if !changed {
		return
	}
	if data, err := json.Marshal(base); err == nil {
		j.writeFile(loopdir.Private(j.Priv).TestsBaseline(), data)
	}
}

// Ratchet fails every check whose tests got worse than the baseline's:
// fewer passing, more skipped, or no results where there were some. It
// returns the violations, each recorded.
func (j *Judge) Ratchet(gate string, results []CheckResult) []string {
	base := j.loadTestBase()
	var out []string
	for i := range results {
		r := &results[i]
		b, ok := base[r.Command]
		if !ok {
			continue
		}
		// Quarantined flaky tests are left out of the counts.
		b.Passed = max(0, b.Passed-j.quarantinedCount(r.Command))
		worse := testcount.Compare(b, r.Tests)
		if len(worse) == 0 {
			continue
		}
		msg := fmt.Sprintf("`%s`: %s", r.Command, strings.Join(worse, "; "))
		j.emit(record.Event{Event: record.Violation, Gate: gate, Kind: "tests_dropped", Message: msg})
		out = append(out, "VIOLATION: "+msg)
		r.Pass = false
		r.Signal = strings.TrimSpace("VIOLATION: " + strings.Join(worse, "; ") + "\n" + r.Signal)
		r.Lines = append([]string{"VIOLATION: " + strings.Join(worse, "; ")}, r.Lines...)
		r.Check.Pass = false
	}
	return out
}
