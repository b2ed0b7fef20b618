package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
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

// refreshVacuous brings the NOT VERIFIED notes about checks that cannot
// fail up to the loop file in force: a check fixed or removed since is no
// longer listed; one added since that cannot fail is.
func (e *Engine) refreshVacuous() {
	want := map[string]bool{}
	for _, c := range e.spec.GateChecks() {
		if why, vacuous := checkcmd.VacuousCheck(c); vacuous {
			want[vacuousNote(c, why)] = true
		}
	}
	var keep []string
	for _, n := range e.st.NotVerified {
		if strings.HasPrefix(n, "the check `") && strings.Contains(n, "` cannot fail (") && !want[n] {
			continue // the check was fixed or removed
		}
		keep = append(keep, n)
	}
	e.st.NotVerified = keep
	if e.st.BaselineDone {
		for n := range want {
			e.addNotVerified(n)
		}
	}
}

// stopBaseline judges the baseline results: checks that cannot run block
// the loop, checks that all pass stop it, and checks that cannot fail are
// named. It returns a stop, or nil to go on.
func (e *Engine) judgeBaseline(results []CheckResult) error {
	var cannot []string
	for _, r := range results {
		if r.ExitCode != 126 && r.ExitCode != 127 {
			continue
		}
		key := "verify"
		if !hasString(e.spec.Verify, r.Command) {
			key = "objective_verify"
		}
		why, fix, ok := checkcmd.ExitHint(r.Command, e.dir, os.Getenv("PATH"), r.ExitCode, key)
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
		return e.stop(ReasonBlocked, strings.Join(cannot, "\n")+"\n(no agent ran: a check that cannot run cannot judge one)")
	}
	for _, c := range e.spec.GateChecks() {
		if why, vacuous := checkcmd.VacuousCheck(c); vacuous {
			e.emit(record.Event{Event: record.Warning, Kind: "vacuous_check", Message: fmt.Sprintf("the check `%s` cannot fail: %s", c, why)})
			e.addNotVerified(vacuousNote(c, why))
		}
	}
	// The baseline ran verify, then objective_verify.
	for i, r := range results {
		if r.Pass {
			continue
		}
		if i >= len(e.spec.Verify) || e.spec.Shape == spec.ShapeRalph {
			e.st.ObjectiveFailed = true
		}
		if i < len(e.spec.Verify) {
			e.st.CycleFailed = true
		}
	}
	if len(results) > 0 && allPass(results) && e.spec.Shape != spec.ShapeReview && e.spec.AllowPassing {
		// Keep it green: green is the expected answer, and nothing is to do.
		e.st.Evidence = evidence("baseline", results, nil)
		e.st.CycleGate, e.st.ObjectiveGate = "pass", "pass"
		return e.stop(ReasonDone, "every check already passes before any agent run (allow_passing: true): the loop is green, no agent ran")
	}
	if len(results) > 0 && allPass(results) && e.spec.Shape != spec.ShapeReview {
		return e.stop(ReasonAlreadyPassing, "the checks already pass before any agent run: either the objective is met or the checks cannot fail. No agent ran. Sharpen the checks so they fail until the work is done, or set allow_passing: true to keep a passing loop green")
	}
	return nil
}

func (e *Engine) loadTestBase() map[string]testcount.Counts {
	out := map[string]testcount.Counts{}
	if data, err := os.ReadFile(loopdir.Private(e.priv).TestsBaseline()); err == nil {
		json.Unmarshal(data, &out)
	}
	return out
}

// saveTestBase records the test results of checks whose output could be
// read; with raise, only results that pass at least as many tests replace
// the stored ones (the ratchet only goes up).
func (e *Engine) saveTestBase(results []CheckResult, raise bool) {
	base := e.loadTestBase()
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
		WriteFileAtomic(loopdir.Private(e.priv).TestsBaseline(), data)
	}
}

// ratchet fails every check whose tests got worse than the baseline's:
// fewer passing, more skipped, or no results where there were some. It
// returns the violations, each recorded.
func (e *Engine) ratchet(gate string, results []CheckResult) []string {
	base := e.loadTestBase()
	var out []string
	for i := range results {
		r := &results[i]
		b, ok := base[r.Command]
		if !ok {
			continue
		}
		worse := testcount.Compare(b, r.Tests)
		if len(worse) == 0 {
			continue
		}
		msg := fmt.Sprintf("`%s`: %s", r.Command, strings.Join(worse, "; "))
		e.emit(record.Event{Event: record.Violation, Gate: gate, Kind: "tests_dropped", Message: msg})
		out = append(out, "VIOLATION: "+msg)
		r.Pass = false
		r.Signal = strings.TrimSpace("VIOLATION: " + strings.Join(worse, "; ") + "\n" + r.Signal)
		r.Lines = append([]string{"VIOLATION: " + strings.Join(worse, "; ")}, r.Lines...)
		r.Check.Pass = false
	}
	return out
}

// ProbeChecks runs a loop's verify and objective_verify checks once, as the
// baseline would, without any state or records (their output goes to a
// temporary folder): for `init` and `doctor`, to say whether the checks
// already pass or cannot run before a loop is paid for.
func ProbeChecks(ctx context.Context, l *spec.Loop) []CheckResult {
	tmp, err := os.MkdirTemp("", "looprinter-probe-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(tmp)
	return ProbeChecksTo(ctx, l, tmp, "check")
}

// ProbeChecksTo runs the checks as ProbeChecks does, but keeps each
// output in logDir, as PREFIX-N.log (N from 1): the results name files
// that stay after the checks' folder is gone (the landing's gates on the
// merged tree keep theirs with the loop's records).
func ProbeChecksTo(ctx context.Context, l *spec.Loop, logDir, prefix string) []CheckResult {
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil
	}
	env := append(os.Environ(), "LOOPRINTER_DIR="+l.Dir, "LOOPRINTER_CYCLE=0")
	return runCheckList(ctx, l, l.GateChecks(), env, func(i int) string {
		return filepath.Join(logDir, fmt.Sprintf("%s-%d.log", prefix, i+1))
	})
}
