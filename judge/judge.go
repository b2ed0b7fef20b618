// Package judge is the loop's judge: it runs the checks and holds them to
// account (checks that cannot run or cannot fail, the passing-count
// ratchet, the baseline), runs the clean room and the holdout checks, and
// gives the failure signal and its signature. It knows nothing of phases or
// budgets: the engine calls it and decides what a verdict means for the
// loop. Nothing here reads what the agent can forge as evidence: a check's
// verdict is its exit code and its output, run by the judge itself.
package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// Judge runs a loop's checks and gives their verdicts. What it needs of the
// engine comes in as values and funcs; a nil func does nothing (a nil Spec
// or Stamp reads as an empty loop file and cycle 0, iteration 0).
type Judge struct {
	// Dir is the loop folder; Priv the engine's private folder for it.
	Dir, Priv string
	// Spec is the loop file in force (it may change while the loop runs).
	Spec func() *spec.Loop
	// Redactor gives the redactor of a loop file: what a check prints is
	// redacted with it before anything reads it.
	Redactor func(*spec.Loop) *redact.Redactor
	// Emit writes a record.
	Emit func(record.Event)
	// Flush makes the engine's last saves durable before checks run (they
	// can run for minutes).
	Flush func()
	// Stamp is the loop's cycle and iteration, for the checks' environment
	// and their logs' names.
	Stamp func() (cycle, iteration int)
	// AddNotVerified and DropNotVerified add and remove a note of what the
	// loop did not verify; AddEvidence adds a line of evidence.
	AddNotVerified, DropNotVerified, AddEvidence func(string)
	// SetAside lists the files a test runner loads that the loop did not
	// start with (the protection rules' business), sorted, holdout files
	// (IsHoldout) left out: the clean room sets them aside. Without it the
	// clean room cannot be made, and fails.
	SetAside func() ([]string, error)
	// StartFiles lists the runner files the loop started with (its test
	// files among them), for the clean room's reading of Go runs
	// (goframing.go).
	StartFiles func() []string
	// StartTop lists the top-level names the loop folder held at the
	// loop's start: the project's own modules, which the engine's Python
	// finder leaves to Python's own order (pyguard.go).
	StartTop func() []string
	// Auditor runs the audit's agent (audit.go).
	Auditor Auditor
	// Flaky gives the flaky checks the loop saw (flaky.go) and NoteFlaky
	// keeps one more (with the tests that flipped); without them the judge
	// keeps them itself, for its own life.
	Flaky     func() FlakyTests
	NoteFlaky func(cmd string, tests []string)
	// WriteFile writes a file of the engine's whole or not at all, synced
	// (os.WriteFile when nil).
	WriteFile func(path string, data []byte) error

	// holdouts are the holdout files; holdoutGitChecked is set once git
	// was judged (gitHide: git holds some of them, and is hidden).
	holdouts          []string
	holdoutGitChecked bool
	// holdoutsKept is set once the holdout files are in the store
	// (holdout_store.go).
	holdoutsKept bool
	// pristine is what agent runs changed under dependency folders and
	// caches (pristine.go), opened on first use.
	pristine *Pristine
	gitHide  *GitHide
	// shared is a gate's results kept for the next gate (shared.go).
	shared *sharedRun
	// flaky is the flaky checks seen, when the engine keeps none.
	flaky FlakyTests
}

// Pristine is the loop's record of the dependency and cache paths agent
// runs changed (see pristine.go).
func (j *Judge) Pristine() *Pristine {
	if j.pristine == nil {
		j.pristine = OpenPristine(j.Dir)
	}
	return j.pristine
}

func (j *Judge) spec() *spec.Loop {
	if j.Spec == nil {
		return &spec.Loop{Dir: j.Dir}
	}
	return j.Spec()
}

func (j *Judge) emit(ev record.Event) {
	if j.Emit != nil {
		j.Emit(ev)
	}
}

func (j *Judge) flush() {
	if j.Flush != nil {
		j.Flush()
	}
}

func (j *Judge) stamp() (cycle, iteration int) {
	if j.Stamp == nil {
		return 0, 0
	}
	return j.Stamp()
}

func (j *Judge) redactor(l *spec.Loop) *redact.Redactor {
	if j.Redactor == nil {
		return redact.New(os.Environ(), nil, nil)
	}
	return j.Redactor(l)
}

func (j *Judge) addNotVerified(s string) {
	if j.AddNotVerified != nil {
		j.AddNotVerified(s)
	}
}

func (j *Judge) dropNotVerified(s string) {
	if j.DropNotVerified != nil {
		j.DropNotVerified(s)
	}
}

func (j *Judge) addEvidence(s string) {
	if j.AddEvidence != nil {
		j.AddEvidence(s)
	}
}

func (j *Judge) writeFile(path string, data []byte) error {
	if j.WriteFile == nil {
		return os.WriteFile(path, data, 0o600)
	}
	return j.WriteFile(path, data)
}

// checkEnv is the environment checks run with: the engine's own, the
// loop's, and what keeps a check's imports its runner's (GuardEnv).
func (j *Judge) checkEnv() []string {
	j.noteChecksNetwork()
	cycle, _ := j.stamp()
	env := append(os.Environ(), "LOOPRINTER_DIR="+j.Dir, fmt.Sprintf("LOOPRINTER_CYCLE=%d", cycle))
	var top, files []string
	if j.StartTop != nil {
		top = j.StartTop()
	}
	if j.StartFiles != nil {
		files = j.StartFiles()
	}
	return append(env, GuardEnv(j.Dir, top, files)...)
}

// RunChecks runs commands in order and saves each output under
// working-records/checks/.
func (j *Judge) RunChecks(ctx context.Context, gate string, cmds []string) []CheckResult {
	return j.RunChecksFrom(ctx, gate, cmds, nil)
}

// RunChecksFrom is RunChecks with the checks' own runs already made
// (pre, one result per command: PrefixChecks' on the same tree); nil runs
// them. What follows the runs (the flaky and quarantined checks run again,
// the judge's notes) is RunChecks' own, on the tree as it is.
func (j *Judge) RunChecksFrom(ctx context.Context, gate string, cmds []string, pre []CheckResult) []CheckResult {
	// The step before reaches the disk first: checks can run for minutes.
	// (A save that fails here fails again, reported, at the step's end.)
	j.flush()
	dir := loopdir.Dir(j.Dir).Checks()
	os.MkdirAll(dir, 0o700)
	stamp := time.Now().UTC().Format("20060102T150405.000")
	cycle, iteration := j.stamp()
	logPath := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%d.log", stamp, cycle, iteration, gate, i+1))
	}
	if gate == "setup" {
		// setup: runs once, before any agent run, on the user's own tree,
		// and what it installs must reach the folder: it is the user's
		// command, not the agent's code.
		l := j.spec()
		return Check(ctx, CheckRequest{Loop: l, Cmds: cmds, Env: j.checkEnv(), Redactor: j.redactor(l), LogPath: logPath, Unconfined: true})
	}
	if gate == "baseline" {
		// Before any agent run, on the tree the loop starts with: the
		// checks fill the cache layer (cache.go).
		var done func()
		ctx, done = j.warmUp(ctx, j.spec(), j.checkEnv())
		defer done()
	}
	results := pre
	if len(pre) != len(cmds) || gate == "setup" || gate == "baseline" {
		results = j.runVisibleChecks(ctx, cmds, logPath)
	}
	if ctx.Err() == nil {
		j.rerunFlaky(ctx, gate, results, j.rerunLog(stamp, gate))
		j.rerunQuarantine(ctx, gate, results, j.rerunLog(stamp, gate))
		if judgingGate(gate) {
			j.ApplyQuarantine(results)
			j.markKnownFlaky(results)
			j.distrustFlaky(gate, results)
		}
		j.noteNoTests(gate, results)
	}
	return results
}

// ApplyBaseline marks failing checks whose failure lines all failed before
// the loop started (baseline: each check's normalized failure lines then),
// when verify_baseline is new-only.
func (j *Judge) ApplyBaseline(results []CheckResult, baseline map[string][]string) {
	if j.spec().VerifyBaseline != "new-only" {
		return
	}
	for i := range results {
		r := &results[i]
		old, ok := baseline[r.Command]
		excused := fmt.Sprintf("`%s` still fails as it did before the loop (verify_baseline: new-only): only new failures were checked", r.Command)
		if r.Pass || !ok {
			j.dropNotVerified(excused) // it passes for real now
			continue
		}
		fresh := newFailures(r.Lines, old)
		r.Baseline = true
		if len(fresh) == 0 {
			r.Pass = true // only failures that were there before the loop
			r.Signal = ""
			j.addNotVerified(excused)
		} else {
			r.Lines = fresh
			r.Signal = strings.Join(fresh, "\n")
		}
	}
}

// newFailures are the failure lines of a check not among old, the
// normalized lines it failed with before the loop.
func newFailures(lines, old []string) []string {
	known := make(map[string]bool, len(old))
	for _, l := range old {
		known[l] = true
	}
	var fresh []string
	for _, l := range lines {
		if !known[Normalize(l)] {
			fresh = append(fresh, l)
		}
	}
	return fresh
}

// AllPass says whether every check passed.
func AllPass(rs []CheckResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

// ChecksOf is the records of the checks.
func ChecksOf(rs []CheckResult) []record.Check {
	out := make([]record.Check, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Check)
	}
	return out
}

// FirstFailure names the first failing check and its exit code ("" when
// all pass).
func FirstFailure(rs []CheckResult) string {
	for _, r := range rs {
		if !r.Pass {
			return fmt.Sprintf("`%s` exited %d", r.Command, r.ExitCode)
		}
	}
	return ""
}

// FailureSignal is the fenced, labelled failure text of failing checks,
// after the errors errs.
func FailureSignal(errs []string, rs []CheckResult) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	for _, r := range rs {
		if r.Pass {
			continue
		}
		fmt.Fprintf(&b, "$ %s   # exit %d\n%s\n", r.Command, r.ExitCode, r.Signal)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Evidence is the evidence lines of a gate: its errors, then each check's
// verdict.
func Evidence(gate string, rs []CheckResult, errs []string) []string {
	var out []string
	for _, er := range errs {
		out = append(out, fmt.Sprintf("%s gate: %s", gate, er))
	}
	for _, r := range rs {
		mark := "pass"
		if !r.Pass {
			mark = "FAIL"
		}
		extra := ""
		if r.Baseline {
			extra = " (baseline failure)"
		}
		if r.Shared {
			extra += " (shared: in verify and objective_verify, run once for both)"
		}
		out = append(out, fmt.Sprintf("%s gate: `%s` exit %d %s%s (%dms)", gate, r.Command, r.ExitCode, mark, extra, r.DurationMS))
	}
	return out
}
