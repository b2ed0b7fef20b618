package loop

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/wave"
)

// Which task an apply applied (wave/applied.go: the note, and reading
// it back at a restart): a task whose run was applied before the engine
// died is judged at the restart (judgeLanded), never run again.

// noteApplying writes the note of rn's apply (after: the plan it left).
func (r *runner) noteApplying(rn *waveRun, after *Plan, judged, refused bool) error {
	return r.writeApplied(rn.slot, wave.Applied{Run: rn.id, Task: rn.task.ID, Judged: judged, Refused: refused}, after)
}

// appliedSaved drops the note of rn's apply: its verdict is saved.
func (r *runner) appliedSaved(rn *waveRun) {
	wave.AppliedSaved(r.priv, rn.slot)
}

// A single build run (parallel: 1) is noted the same way at slot 0: before
// its layer is applied, and again once the apply and the guard are done;
// the note goes once the step that judged its task is saved (build).

// landedTasks reads the notes of the applies whose work is in the folder
// (wave.Landed), before the applies a kill interrupted are finished.
func (r *runner) landedTasks() []wave.Applied {
	return wave.Landed(r.dir, r.priv)
}

// judgeLanded judges, at a restart, the tasks whose runs were applied
// before the engine died and whose verdicts were not saved. A task its
// run marked done, whose target changed, and of which nothing was refused
// passes: the cycle gate judges the work with the rest; it is not run
// again. Any other such task fails as its live verdict would have, and
// runs again on the tree its run left. last is the engine's last plan,
// the judged one after.
func (w *waves) judgeLanded(landed []wave.Applied, last **Plan) error {
	r := w.run
	if len(landed) == 0 || r.st.Judged == nil {
		return nil
	}
	for _, n := range landed {
		task, ok := r.st.Judged.Find(n.Task)
		if !ok || task.Passes {
			continue
		}
		changed := guard.FileSum(filepath.Join(r.dir, task.TargetFile)) != r.st.TaskBase[task.ID]
		if !n.Marked || !changed || n.Refused || slices.Contains(r.deadFailed, task.ID) {
			continue
		}
		for i := range r.st.Judged.Tasks {
			if r.st.Judged.Tasks[i].ID == task.ID {
				r.st.Judged.Tasks[i].Passes = true
			}
		}
		r.st.TasksPassed++
		msg := fmt.Sprintf("%s: the run %s was applied before the engine died; its task is judged now and not run again (the cycle gate judges its work)", task.Title, n.Run)
		if !n.Judged {
			msg += "; the apply was finished at the restart, and what it refused was not recorded"
		}
		r.emit(record.Event{Event: record.TaskPassed, Task: task.ID, File: task.TargetFile, AgentRun: n.Run, Message: msg})
	}
	r.store.noteWriteErr(w.writeJudged())
	*last = clonePlan(r.st.Judged)
	return r.store.checkpoint()
}
