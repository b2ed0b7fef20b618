package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/wave"
)

// The kept attempt of a best-of on the applied tree (wave/keep.go): an
// attempt passed on its own layer, laid under the check box, which code
// can tell from the applied tree (its mounts). Before any other passing
// attempt is dropped, the best one is applied as one run of a wave and the
// task's checks run again on the folder as the apply left it. When they
// fail there, the apply is taken back (wave.Undo), the attempt counts as
// failed with a violation, and the next passing attempt is tried.

// keepAttempt applies rn (a passing attempt) and judges it on the applied
// tree. kept says it passed there and stays applied: run and after are
// then what its task's verdict (judgeBuild) reads. Not kept, the folder is
// as before and res says why it failed.
func (h *bestOfHost) keepAttempt(ctx context.Context, rn *waveRun, res *wave.Attempt) (run *AgentRun, after *Plan, kept bool, err error) {
	r, seen := h.ws.run, h.seenPlan()
	undo, err := wave.Backup(r.dir, rn.layer.Upper, filepath.Join(r.priv, "undo"), engineOwnedPath)
	if err != nil {
		return nil, nil, false, r.stop(ReasonBlocked, "cannot keep what the apply of an attempt replaces: "+err.Error())
	}
	defer undo.Drop()
	untag := h.ws.tags.wave(rn)
	defer untag()
	run, after, err = r.finishWaveRun(ctx, rn, &waveApply{Merger: wave.NewMerger(), seen: seen})
	if err != nil || run == nil {
		return run, after, false, err
	}
	cmds := r.spec().GateChecks()
	results := r.judge().RunChecks(ctx, "task", cmds)
	if ctx.Err() != nil {
		return run, after, false, r.stop(ReasonInterrupted, "interrupted while the kept attempt of "+rn.task.ID+" was judged on the applied tree")
	}
	r.judge().ApplyBaseline(results, r.st.Baseline)
	pass := len(results) == len(cmds) && judge.AllPass(results)
	r.emit(record.Event{Event: record.Verify, Gate: "task", Task: rn.task.ID, Pass: record.Bool(pass), Checks: judge.ChecksOf(results)})
	if pass {
		return run, after, true, nil
	}
	// Taken back: the folder as before the apply, the note of the apply
	// gone, the attempt out of the running.
	if rerr := undo.Restore(); rerr != nil {
		return nil, nil, false, r.stop(ReasonBlocked, "cannot take back the apply of an attempt that failed on the applied tree: "+rerr.Error())
	}
	r.appliedSaved(rn)
	rn.dropped = true
	msg := fmt.Sprintf("attempt %d of %s passed on its own layer but its checks fail on the applied tree: its apply was taken back", rn.slot+1, rn.task.ID)
	r.emit(record.Event{Event: record.Violation, Task: rn.task.ID, Kind: "passed_only_judged", Message: msg})
	res.Pass = false
	res.Signal = "VIOLATION: " + msg + "\n" + judge.FailureSignal(nil, results)
	return nil, nil, false, nil
}

// engineOwnedPath says whether an apply never writes rel: the engine's
// records, the repository, the judged plan.
func engineOwnedPath(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	return first == loopdir.RecordsDir || first == ".git" || rel == loopdir.OutputDir+"/plan.json"
}
