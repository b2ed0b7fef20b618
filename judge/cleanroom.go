package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The clean room. A gate that would end the loop DONE (the objective gate,
// ralph's verify, the review's final checks) passes only if its checks
// pass once more in a clean room: the final tree with every file a test
// runner loads that the agent added (a new test file with a TestMain, a
// new test_*.py that patches the code under test, a conftest, a module
// that shadows one a check runs with `python -m`) set aside, and with the
// holdout checks run beside them. Test files and runner configuration the
// loop started with are protected, so they are as they were; the
// deliverable's own source is what it is. The agent's new tests still run
// in every other gate, where they help; they never decide DONE.
//
// The room is a copy-on-write view of the loop folder at its own path
// (sandbox.View), so a check sees the same paths as in the folder, and
// nothing it writes reaches the folder. Where a view cannot be made it is
// a copy of the folder in a temporary folder.

// cleanRoomResult is what the clean room found.
type cleanRoomResult struct {
	rec     record.CleanRoom
	results []CheckResult // the gate's checks
	holdout []CheckResult // the holdout checks
}

// cleanRoom runs cmds, then the holdout checks, in the clean room.
func (j *Judge) cleanRoom(ctx context.Context, gate string, cmds []string) cleanRoomResult {
	start := time.Now()
	var cr cleanRoomResult
	defer func() { cr.rec.DurationMS = time.Since(start).Milliseconds() }()
	if j.SetAside == nil {
		cr.rec.Error = "the clean room cannot be made: it does not know the files the loop started with"
		return cr
	}
	aside, err := j.SetAside()
	if err != nil {
		cr.rec.Error = "the clean room cannot be made: " + err.Error()
		return cr
	}
	cr.rec.SetAside = aside
	j.flush()
	logs := loopdir.Dir(j.Dir).Checks()
	held := loopdir.Private(j.Priv).HoldoutChecks()
	for _, d := range []string{logs, held} {
		os.MkdirAll(d, 0o700)
	}
	stamp := time.Now().UTC().Format("20060102T150405.000")
	cycle, iteration := j.stamp()
	logAt := func(dir, kind string) func(int) string {
		return func(i int) string {
			return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%s-%d.log", stamp, cycle, iteration, gate, kind, i+1))
		}
	}
	// The gate's checks see neither what is set aside nor the holdout
	// files (their output may reach a prompt); the holdout checks see
	// the holdout files.
	// Dependency folders and caches as they were at the loop's start.
	premove, put, pchanged := j.Pristine().View()
	if perr := j.Pristine().Err(); perr != nil {
		cr.rec.Error = "the clean room cannot be made: the dependency folders cannot be compared with the loop's start: " + perr.Error()
		return cr
	}
	cr.rec.Pristine = pchanged[:min(len(pchanged), 100)]
	hidden := append(append(append([]string{}, aside...), j.holdouts...), premove...)
	// The Go test folders of the start's test files get the engine's test
	// main (goaccount.go), and the holdout's too for the holdout checks.
	acct := j.newGoAccount(j.startFiles())
	defer acct.done()
	actx, aput := acct.with(ctx, put)
	if cr.results, err = j.inViewPut(actx, hidden, aput, cmds, logAt(logs, "clean-room")); err != nil {
		cr.rec.Error = "the clean room cannot be made: " + err.Error()
		return cr
	}
	j.forgedGo(cr.results)
	j.judgeGo(acct, cr.results)
	cr.rec.Checks = ChecksOf(cr.results)
	if l := j.spec(); len(l.HoldoutVerify) > 0 && ctx.Err() == nil {
		// The holdout files the engine keeps out of the folder are laid in,
		// with the engine's Go test main for the holdout's folders.
		hhide, hfiles := j.holdoutView()
		hacct := j.newGoAccount(append(j.startFiles(), j.holdouts...))
		defer hacct.done()
		hctx, hput := hacct.with(ctx, append(append([]sandbox.ViewFile{}, put...), hfiles...))
		if cr.holdout, err = j.inViewPut(hctx, append(append(append([]string{}, aside...), premove...), hhide...), hput, l.HoldoutVerify, logAt(held, "holdout")); err != nil {
			cr.rec.Error = "the clean room cannot be made: " + err.Error()
			return cr
		}
		j.forgedGo(cr.holdout)
		j.judgeGo(hacct, cr.holdout)
		cr.rec.HoldoutPassed, cr.rec.HoldoutFailed, cr.rec.HoldoutOfTests = holdoutCounts(cr.holdout)
	}
	cr.rec.Mode = "view"
	if sandbox.LayerProbe() != nil {
		cr.rec.Mode = "copy"
	}
	cr.rec.Pass = AllPass(cr.results) && cr.rec.HoldoutFailed == 0
	return cr
}

// holdoutCounts counts the holdout checks: by test where every command's
// runner printed its counts, by command otherwise.
func holdoutCounts(rs []CheckResult) (passed, failed int, tests bool) {
	tests = len(rs) > 0
	for _, r := range rs {
		if !r.Tests.Known {
			tests = false
		}
	}
	for _, r := range rs {
		switch {
		case tests:
			passed += r.Tests.Passed
			failed += r.Tests.Failed
			if !r.Pass && r.Tests.Failed == 0 {
				failed++ // it failed without a failing test: it counts
			}
		case r.Pass:
			passed++
		default:
			failed++
		}
	}
	return passed, failed, tests
}

// inViewPut is inView with files put into the view.
// Where the agent changed dependencies and the loop file has `setup:`, the
// setup rebuilds them in the view first.
func (j *Judge) inViewPut(ctx context.Context, hide []string, put []sandbox.ViewFile, cmds []string, logPath func(int) string) ([]CheckResult, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	l := j.spec()
	var setup []string
	if _, _, changed := j.Pristine().View(); len(changed) > 0 && dependencyChanged(changed) {
		setup = l.Setup
	}
	r := j.request(hide, cmds, logPath)
	r.Put, r.Setup, r.Room = put, setup, true
	return Check(ctx, r), nil
}

// dependencyChanged says whether a path under a dependency folder (not
// only a cache) is among changed.
func dependencyChanged(changed []string) bool {
	for _, rel := range changed {
		for _, part := range strings.Split(rel, "/") {
			if dependencyDirs[part] {
				return true
			}
		}
	}
	return false
}

// inViewGate runs a gate's checks with hide out of their view (the holdout
// files): a view under bubblewrap, a copy elsewhere.
func (j *Judge) inViewGate(ctx context.Context, hide, cmds []string, logPath func(int) string) ([]CheckResult, error) {
	return Check(ctx, j.request(hide, cmds, logPath)), nil
}

// inView runs cmds in the judge's sandbox over the loop folder with hide
// out of its view (a view under bubblewrap, a copy elsewhere).
func (j *Judge) inView(ctx context.Context, hide, cmds []string, logPath func(int) string) ([]CheckResult, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	r := j.request(hide, cmds, logPath)
	r.Room = true
	return Check(ctx, r), nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// JudgeCleanRoom gives the clean room's verdict on a gate whose checks
// passed: the record for the gate, the failure signal when it fails, and
// the violation when it fails because of what the agent added. Its
// evidence goes to AddEvidence.
func (j *Judge) JudgeCleanRoom(ctx context.Context, gate string, cmds []string) (*record.CleanRoom, string) {
	cr := j.cleanRoom(ctx, gate, cmds)
	flaky := j.flakyInRoom(ctx, gate, &cr)
	rec := cr.rec
	if ctx.Err() != nil || rec.Pass {
		j.addEvidence(cleanRoomEvidence(rec))
		return &rec, ""
	}
	var b strings.Builder
	if rec.Error != "" {
		b.WriteString("clean room: " + rec.Error + "\n")
	}
	if !AllPass(cr.results) {
		if len(flaky) > 0 {
			mode, runs := j.spec().FlakyRule()
			fmt.Fprintf(&b, "clean room: FLAKY: the checks passed in the loop folder, and %s failed when run again on the same tree in the clean room (nothing was set aside): the result changes between runs. %s\n", flaky, flakyAdvice(mode, runs))
		} else if len(rec.SetAside) > 0 {
			fmt.Fprintf(&b, "clean room: the checks pass in the loop folder, but fail once the test files and runner configuration the agent added are set aside (%s): the tests the loop started with decide DONE, and the work must pass them as they are.\n", strings.Join(rec.SetAside, ", "))
		} else {
			b.WriteString("clean room: the checks fail when run again in a clean copy of the loop folder.\n")
		}
		b.WriteString(FailureSignal(nil, cr.results) + "\n")
	}
	if rec.HoldoutFailed > 0 {
		b.WriteString(j.holdoutSignal(cr) + "\n")
	}
	signal := strings.TrimRight(b.String(), "\n")
	if len(rec.SetAside) > 0 && !AllPass(cr.results) {
		for _, r := range cr.results {
			if !r.Pass {
				j.emit(record.Event{Event: record.Violation, Kind: "test_gaming", Gate: gate, File: rec.SetAside[0],
					Message: fmt.Sprintf("`%s` passes with the files the agent added (%s) and fails without them", r.Command, strings.Join(rec.SetAside, ", "))})
				break
			}
		}
	}
	j.addEvidence(cleanRoomEvidence(rec))
	return &rec, signal
}

// flakyInRoom judges the clean room's run of checks that passed in the
// loop folder: with nothing set aside the tree is the same, so a check
// that fails there flipped: it is flaky. Under flaky: quarantine, the
// tests that flipped are left out (and the room's verdict taken again).
// It describes the flaky checks ("" when none).
func (j *Judge) flakyInRoom(ctx context.Context, gate string, cr *cleanRoomResult) string {
	// A room that differs from the folder by design (dependency folders
	// seen as at the start, the repository hidden) explains a failure:
	// that is no flake.
	if ctx.Err() != nil || cr.rec.Error != "" || len(cr.rec.SetAside) > 0 || len(cr.rec.Pristine) > 0 || j.HiddenGit() != nil || AllPass(cr.results) {
		return ""
	}
	for _, r := range cr.results {
		if !r.Pass && len(r.Lines) > 0 && (strings.HasPrefix(r.Lines[0], forgedGoHead) || strings.HasPrefix(r.Lines[0], forgedRunHead)) {
			return "" // output printed by code under test: no flake either
		}
	}
	mode, _ := j.spec().FlakyRule()
	again := func() {
		j.ApplyQuarantine(cr.results)
		cr.rec.Checks = ChecksOf(cr.results)
		cr.rec.Pass = AllPass(cr.results) && cr.rec.HoldoutFailed == 0
	}
	if mode == spec.FlakyQuarantine {
		again() // the tests quarantined before
	}
	var names []string
	for _, r := range cr.results {
		if !r.Pass {
			j.noteFlaky(gate, "clean_room", r.Command, r.Failed)
			desc := "`" + r.Command + "`"
			if len(r.Failed) > 0 {
				desc += " (tests that flipped: " + strings.Join(r.Failed, ", ") + ")"
			}
			names = append(names, desc)
		}
	}
	if mode == spec.FlakyQuarantine && len(names) > 0 {
		again()
	}
	if AllPass(cr.results) {
		return ""
	}
	return strings.Join(names, ", ")
}

// holdoutSignal is what a failing holdout check tells the next prompt, as
// holdout_feedback says: how many fail (count), which commands (names), or
// their failure lines (full).
func (j *Judge) holdoutSignal(cr cleanRoomResult) string {
	n := cr.rec.HoldoutPassed + cr.rec.HoldoutFailed
	head := fmt.Sprintf("%d of %d holdout checks fail: the work is not done (those checks are not shown to you; make the work meet the objective, not only the visible tests).", cr.rec.HoldoutFailed, n)
	switch j.spec().HoldoutFeedback {
	case "names":
		var names []string
		for _, r := range cr.holdout {
			if !r.Pass {
				names = append(names, "`"+r.Command+"`")
			}
		}
		return head + "\nfailing: " + strings.Join(names, ", ")
	case "full":
		return head + "\n" + FailureSignal(nil, cr.holdout)
	}
	return head
}

func cleanRoomEvidence(rec record.CleanRoom) string {
	s := "clean room: pass"
	if !rec.Pass {
		s = "clean room: FAIL"
	}
	if rec.Error != "" {
		s += " (" + rec.Error + ")"
	}
	if len(rec.SetAside) > 0 {
		s += fmt.Sprintf(" with %d added runner file(s) set aside (%s)", len(rec.SetAside), strings.Join(rec.SetAside, ", "))
	}
	if n := rec.HoldoutPassed + rec.HoldoutFailed; n > 0 {
		s += fmt.Sprintf("; holdout %d/%d pass", rec.HoldoutPassed, n)
	}
	return s
}

// IsHoldout says whether rel is one of the holdout files.
func (j *Judge) IsHoldout(rel string) bool {
	for _, g := range j.spec().Holdout {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return true
		}
	}
	return false
}
