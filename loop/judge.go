package loop

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/review"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/stopping"
)

// The engine's side of the judge (package judge): the Judge it runs its
// checks with, and what of a verdict is the engine's (the state, the stops,
// the audit after the clean room).

// verdicts is what the judge's verdicts mean for the loop, given what it
// needs of the engine: the setup and the baseline (setup_baseline.go),
// the holdout files at the start, the done verdict (the clean room, the
// audit, the strength pass: strength.go), the notes of checks that
// cannot fail.
type verdicts struct {
	dir   string
	st    *State
	spec  func() *spec.Loop // the loop file in force
	judge func() *judge.Judge
	emit  func(record.Event)
	stop  func(reason, summary string) error // the engine's stop
	roll  *rollback                          // the baseline's checks are the first checkpoint's
}

// FlakyLines are the flaky checks of a state, one line each, for status
// and the report (judge.FlakyLines).
func FlakyLines(st *State) []string {
	if st == nil {
		return nil
	}
	return judge.FlakyLines(st.Flaky)
}

// sharedNote says how many checks one run answered for both verify and
// objective_verify ("" when none), for a record's message.
func sharedNote(results []CheckResult) string {
	if n := judge.SharedCount(judge.ChecksOf(results)); n > 0 {
		return fmt.Sprintf("; shared gate: %d check(s) in both verify and objective_verify ran once for both", n)
	}
	return ""
}

// refreshVacuous brings the NOT VERIFIED notes about checks that cannot
// fail up to the loop file in force: a check fixed or removed since is no
// longer listed; one added since that cannot fail is.
func (v *verdicts) refreshVacuous() {
	keep, add := v.judge().RefreshVacuous(v.st.NotVerified, v.st.BaselineDone)
	v.st.NotVerified = keep
	for _, n := range add {
		v.st.addNotVerified(n)
	}
}

// judgeBaseline judges the baseline results: checks that cannot run (or
// whose runner cannot start) block the loop, checks that all pass stop it
// unless a holdout check fails, and checks that cannot fail are named. It
// returns a stop, or nil to go on, with what the first prompt is to say of
// failing holdout checks ("" when none).
func (v *verdicts) judgeBaseline(ctx context.Context, results []CheckResult) (holdoutSignal string, err error) {
	l := v.spec()
	if cannot := v.judge().CannotRun(results); cannot != "" {
		return "", v.stop(ReasonBlocked, cannot)
	}
	if cannot := v.judge().RunnerCannotStart(results); cannot != "" {
		return "", v.stop(ReasonBlocked, cannot)
	}
	v.judge().NoteVacuous()
	// The baseline ran verify, then objective_verify (a command in both
	// once, for both).
	for _, r := range results {
		if r.Pass {
			continue
		}
		inVerify := slices.Contains(l.Verify, r.Command)
		if !inVerify || l.Shape == spec.ShapeRalph || slices.Contains(l.ObjectiveVerify, r.Command) {
			v.st.ObjectiveFailed = true
		}
		if inVerify {
			v.st.CycleFailed = true
		}
	}
	holdoutNote := ""
	if len(results) > 0 && judge.AllPass(results) && l.Shape != spec.ShapeReview && len(l.HoldoutVerify) > 0 {
		// The visible checks pass: the objective is met only if the
		// holdout checks pass too (a holdout file may hold the only test
		// that fails), so they run before anything is decided.
		passed, failed, _, herr := v.judge().BaselineHoldout(ctx)
		if ctx.Err() != nil {
			return "", v.stop(ReasonInterrupted, "interrupted during the baseline's holdout checks")
		}
		if herr != nil {
			return "", v.stop(ReasonBlocked, "the holdout checks cannot run at the baseline: "+herr.Error())
		}
		msg := fmt.Sprintf("the visible checks pass before any agent run; holdout checks: %d of %d fail", failed, passed+failed)
		v.emit(record.Event{Event: record.Baseline, Kind: "holdout", Pass: record.Bool(failed == 0), Message: msg})
		if failed > 0 {
			// Not met: the objective gate fails until the holdout checks
			// pass (they run in its clean room).
			v.st.ObjectiveFailed = true
			return fmt.Sprintf("%d of %d holdout checks fail before any agent run, although the visible checks pass: the objective is not met (those checks are not shown to you; make the work meet the objective, not only the visible tests).", failed, passed+failed), nil
		}
		holdoutNote = fmt.Sprintf(" (the holdout checks pass too: %d of %d)", passed, passed+failed)
	}
	if len(results) > 0 && judge.AllPass(results) && l.Shape != spec.ShapeReview && l.AllowPassing {
		// Keep it green: green is the expected answer, and nothing is to do.
		v.st.Evidence = judge.Evidence("baseline", results, nil)
		v.st.CycleGate, v.st.ObjectiveGate = "pass", "pass"
		return "", v.stop(ReasonDone, "every check already passes before any agent run (allow_passing: true)"+holdoutNote+": the loop is green, no agent ran")
	}
	if len(results) > 0 && judge.AllPass(results) && l.Shape != spec.ShapeReview {
		return "", v.stop(ReasonAlreadyPassing, "the checks already pass before any agent run"+holdoutNote+": either the objective is met or the checks cannot fail. No agent ran. Sharpen the checks so they fail until the work is done, or set allow_passing: true to keep a passing loop green")
	}
	return "", nil
}

// runnerStart is what the clean room keeps (judge.RunnerStart); setAside
// the runner files the loop did not start with (judge.SetAside).
var (
	runnerStart = judge.RunnerStart
	setAside    = judge.SetAside
)

// holdoutStart finds the holdout files before any check runs and says why
// they cannot be kept from the agent here, if they cannot.
func (v *verdicts) holdoutStart() error {
	// A crash left the holdout files in the engine's store: back first.
	if err := judge.RestoreHoldouts(v.dir); err != nil {
		return fmt.Errorf("cannot put the holdout files back in the loop folder from the engine's private folder (%s): %w", loopdir.PrivateOf(v.dir).HoldoutFiles(), err)
	}
	if len(v.spec().Holdout) == 0 {
		return nil
	}
	p, err := confine.Policy(v.spec(), nil)
	if err != nil {
		return err
	}
	return v.judge().HoldoutReady(p.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil)
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
	rs, _, _ := LandChecksTo(ctx, l, "", logDir, prefix, nil)
	return rs
}

// LandChecksTo runs the loop's gate checks on a merged tree (l.Dir) as the
// clean room does (judge.Land: runDir is where the loop ran, fromBranch
// the paths its branch changed).
func LandChecksTo(ctx context.Context, l *spec.Loop, runDir, logDir, prefix string, fromBranch func(rel string) bool) (results []CheckResult, aside []string, err error) {
	return judge.Land{Loop: l, RunDir: runDir, LogDir: logDir, Prefix: prefix, FromBranch: fromBranch, Redactor: Redactor(l)}.Checks(ctx)
}

// auditor is the agent of the audit: agents.auditor, else another model of
// the builder's backend where it has one (a warning when they are the same).
func (v *verdicts) auditor() spec.Agent {
	l := v.spec()
	builder := l.AgentFor("build", false)
	if l.Shape == spec.ShapeRalph {
		builder = l.AgentFor("ralph", false)
	}
	review.OtherModelFor(l, "auditor", builder)
	a := l.AgentFor("auditor", false)
	if review.SameAgent(a, builder) && !v.st.AuditWarned {
		v.st.AuditWarned = true
		v.emit(record.Event{Event: record.Warning, Phase: "auditor", Message: fmt.Sprintf("the auditor and the builder are the same model (%s): they share blind spots; set agents.auditor to another backend or model", review.AgentName(a))})
	}
	return a
}

// auditFindings reads the auditor's answer kept at path: how many
// findings it holds, and those at or above bar.
func auditFindings(path, bar string) (int, []judge.Finding) {
	data, _ := guard.ReadBounded(path, 4<<20)
	findings, _ := review.ParseFindings(data)
	var over []judge.Finding
	for _, f := range review.AtOrAbove(findings, bar) {
		over = append(over, judge.Finding{Severity: f.Severity, Place: f.Place(), Title: f.Title, Detail: f.Detail})
	}
	return len(findings), over
}

// gateEvidence is a gate's evidence lines (judge.GateEvidence), its
// failure named by the first line of its signal that says what failed.
func gateEvidence(gate string, rs []CheckResult, errs []string, pass bool, signal string) []string {
	return judge.GateEvidence(gate, rs, errs, pass, stopping.FirstSignalLine(signal))
}
