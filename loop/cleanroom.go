package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
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

// runnerStart is what the clean room keeps: the runner files and top-level
// names the loop folder held at the start. A loop that started before the
// engine kept it uses the files protected at the start.
func (e *Engine) runnerStart() (runnerFiles, error) {
	var rf runnerFiles
	p := loopdir.Private(e.priv)
	data, err := os.ReadFile(p.RunnerFilesAtStart())
	if err == nil {
		if json.Unmarshal(data, &rf) != nil {
			return rf, fmt.Errorf("the engine's list of the files the loop started with is corrupt (%s)", p.RunnerFilesAtStart())
		}
		return rf, nil
	}
	data, err = os.ReadFile(p.ProtectedAtStart())
	if err != nil {
		return rf, fmt.Errorf("the engine has no list of the files the loop started with: %w", err)
	}
	if json.Unmarshal(data, &rf.Files) != nil {
		return rf, fmt.Errorf("the engine's list of protected files is corrupt (%s)", p.ProtectedAtStart())
	}
	return rf, nil
}

// setAside lists the files a test runner loads that the loop did not start
// with, sorted.
func (e *Engine) setAside() ([]string, error) {
	start, err := e.runnerStart()
	if err != nil {
		return nil, err
	}
	rules, err := NewProtectRules(e.dir, e.spec)
	if err != nil {
		return nil, err
	}
	rules.SetTopAtStart(start.Top)
	had := map[string]bool{}
	for _, f := range start.Files {
		had[f] = true
	}
	var out []string
	for _, f := range rules.Walked() {
		if !had[f] && !e.isHoldout(f) && rules.RunnerFile(f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// cleanRoom runs cmds, then the holdout checks, in the clean room.
func (e *Engine) cleanRoom(ctx context.Context, gate string, cmds []string) cleanRoomResult {
	start := time.Now()
	var cr cleanRoomResult
	defer func() { cr.rec.DurationMS = time.Since(start).Milliseconds() }()
	aside, err := e.setAside()
	if err != nil {
		cr.rec.Error = "the clean room cannot be made: " + err.Error()
		return cr
	}
	cr.rec.SetAside = aside
	e.flush()
	logs := loopdir.Dir(e.dir).Checks()
	held := loopdir.Private(e.priv).HoldoutChecks()
	for _, d := range []string{logs, held} {
		os.MkdirAll(d, 0o700)
	}
	stamp := time.Now().UTC().Format("20060102T150405.000")
	logAt := func(dir, kind string) func(int) string {
		return func(i int) string {
			return filepath.Join(dir, fmt.Sprintf("%s-c%d-i%d-%s-%s-%d.log", stamp, e.st.Cycle, e.st.Iterations, gate, kind, i+1))
		}
	}
	// The gate's checks see neither what is set aside nor the holdout
	// files (their output may reach a prompt); the holdout checks see
	// the holdout files.
	hidden := append(append([]string{}, aside...), e.holdouts...)
	if cr.results, err = e.inView(ctx, hidden, cmds, logAt(logs, "clean-room")); err != nil {
		cr.rec.Error = "the clean room cannot be made: " + err.Error()
		return cr
	}
	cr.rec.Checks = checksOf(cr.results)
	if len(e.spec.HoldoutVerify) > 0 && ctx.Err() == nil {
		if cr.holdout, err = e.inView(ctx, aside, e.spec.HoldoutVerify, logAt(held, "holdout")); err != nil {
			cr.rec.Error = "the clean room cannot be made: " + err.Error()
			return cr
		}
		cr.rec.HoldoutPassed, cr.rec.HoldoutFailed, cr.rec.HoldoutOfTests = holdoutCounts(cr.holdout)
	}
	cr.rec.Mode = "view"
	if sandbox.LayerProbe() != nil {
		cr.rec.Mode = "copy"
	}
	cr.rec.Pass = allPass(cr.results) && cr.rec.HoldoutFailed == 0
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

// inView runs cmds in a view of the loop folder with hide hidden, or in a
// copy of it where no view can be made.
func (e *Engine) inView(ctx context.Context, hide, cmds []string, logPath func(int) string) ([]CheckResult, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	if sandbox.LayerProbe() != nil {
		return e.inCleanCopy(ctx, hide, cmds, logPath)
	}
	l := layerOf(e.dir, "cleanroom", e.dir)
	if _, err := sandbox.PrepareLayer(l); err != nil {
		return nil, err
	}
	if err := sandbox.ClearLayer(l); err != nil {
		return nil, err
	}
	defer sandbox.ClearLayer(l)
	// Each check runs `exec HELPER` with the view in its environment: the
	// helper lays the view in a mount namespace of its own and runs the
	// check's own command there.
	v := sandbox.View{Layer: l, Hide: hide}
	var out []CheckResult
	red := Redactor(e.spec)
	for i, c := range cmds {
		prog, _, env, err := v.Command([]string{"/bin/sh", "-c", c}, e.dir)
		if err != nil {
			return nil, err
		}
		r := runCheck(ctx, e.dir, "exec "+shellQuote(prog), logPath(i), e.spec.CheckTimeout.D(), append(e.checkEnv(), env), e.spec.TestSummaries, red)
		r.Command, r.Check.Command = c, c
		out = append(out, r)
		if ctx.Err() != nil {
			break
		}
		if err := sandbox.ClearLayer(l); err != nil {
			return out, err
		}
	}
	return out, nil
}

// inCleanCopy is the clean room without copy-on-write layers: a copy of
// the loop folder (without the engine's records and what is set aside) in
// a temporary folder, removed afterwards.
func (e *Engine) inCleanCopy(ctx context.Context, aside, cmds []string, logPath func(int) string) ([]CheckResult, error) {
	tmp, err := os.MkdirTemp("", "looprinter-clean-room-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	room := filepath.Join(tmp, filepath.Base(e.dir))
	skip := map[string]bool{loopdir.RecordsDir: true}
	for _, a := range aside {
		skip[a] = true
	}
	if err := copyTree(e.dir, room, skip); err != nil {
		return nil, fmt.Errorf("copy the loop folder: %w", err)
	}
	l := *e.spec
	l.Dir = room
	return runCheckList(ctx, &l, cmds, e.checkEnv(), logPath), nil
}

// copyTree copies the regular files, links and folders of src to dst,
// leaving out the relative paths in skip.
func copyTree(src, dst string, skip map[string]bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip[filepath.ToSlash(rel)] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return sandbox.CopyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// doneVerdict decides whether a gate whose checks passed in the loop
// folder ends the loop DONE: its checks again in the clean room, then the
// audit. It returns the clean room's record and the failure signal ("":
// DONE); an error when the loop stops (interrupted, a budget spent by the
// audit).
func (e *Engine) doneVerdict(ctx context.Context, gate string, cmds []string) (*record.CleanRoom, string, error) {
	room, signal := e.judgeCleanRoom(ctx, gate, cmds)
	if ctx.Err() != nil {
		return room, "", e.stop(ReasonInterrupted, "interrupted during the "+gate+" gate's clean room")
	}
	if !room.Pass {
		if signal == "" {
			signal = "clean room: the checks fail there"
		}
		return room, signal, nil
	}
	sig, err := e.audit(ctx, gate)
	if err != nil {
		return room, "", err
	}
	if ctx.Err() != nil {
		return room, "", e.stop(ReasonInterrupted, "interrupted during the audit")
	}
	return room, sig, nil
}

// judgeCleanRoom gives the clean room's verdict on a gate whose checks
// passed: the record for the gate, the failure signal when it fails, and
// the violation when it fails because of what the agent added.
func (e *Engine) judgeCleanRoom(ctx context.Context, gate string, cmds []string) (*record.CleanRoom, string) {
	cr := e.cleanRoom(ctx, gate, cmds)
	rec := cr.rec
	if ctx.Err() != nil || rec.Pass {
		e.st.Evidence = append(e.st.Evidence, cleanRoomEvidence(rec))
		return &rec, ""
	}
	var b strings.Builder
	if rec.Error != "" {
		b.WriteString("clean room: " + rec.Error + "\n")
	}
	if !allPass(cr.results) {
		if len(rec.SetAside) > 0 {
			fmt.Fprintf(&b, "clean room: the checks pass in the loop folder, but fail once the test files and runner configuration the agent added are set aside (%s): the tests the loop started with decide DONE, and the work must pass them as they are.\n", strings.Join(rec.SetAside, ", "))
		} else {
			b.WriteString("clean room: the checks fail when run again in a clean copy of the loop folder.\n")
		}
		b.WriteString(failureSignal(nil, cr.results) + "\n")
	}
	if rec.HoldoutFailed > 0 {
		b.WriteString(e.holdoutSignal(cr) + "\n")
	}
	signal := strings.TrimRight(b.String(), "\n")
	if len(rec.SetAside) > 0 && !allPass(cr.results) {
		for _, r := range cr.results {
			if !r.Pass {
				e.emit(record.Event{Event: record.Violation, Kind: "test_gaming", Gate: gate, File: rec.SetAside[0],
					Message: fmt.Sprintf("`%s` passes with the files the agent added (%s) and fails without them", r.Command, strings.Join(rec.SetAside, ", "))})
				break
			}
		}
	}
	e.st.Evidence = append(e.st.Evidence, cleanRoomEvidence(rec))
	return &rec, signal
}

// holdoutSignal is what a failing holdout check tells the next prompt, as
// holdout_feedback says: how many fail (count), which commands (names), or
// their failure lines (full).
func (e *Engine) holdoutSignal(cr cleanRoomResult) string {
	n := cr.rec.HoldoutPassed + cr.rec.HoldoutFailed
	head := fmt.Sprintf("%d of %d holdout checks fail: the work is not done (those checks are not shown to you; make the work meet the objective, not only the visible tests).", cr.rec.HoldoutFailed, n)
	switch e.spec.HoldoutFeedback {
	case "names":
		var names []string
		for _, r := range cr.holdout {
			if !r.Pass {
				names = append(names, "`"+r.Command+"`")
			}
		}
		return head + "\nfailing: " + strings.Join(names, ", ")
	case "full":
		return head + "\n" + failureSignal(nil, cr.holdout)
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

// isHoldout says whether rel is one of the holdout files.
func (e *Engine) isHoldout(rel string) bool {
	for _, g := range e.spec.Holdout {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return true
		}
	}
	return false
}
