package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/wave"
)

// Which task an apply applied. Before a run of a wave (or the kept
// attempt of a best-of) is applied, the engine notes, synced, in its
// private folder beside the apply's journal, which run and task it
// applies and whether the run marked its task done; after the apply and
// the guard, whether anything of the run was refused. The note goes once
// the task's verdict is saved. An engine killed in between finds it at
// the restart: when the apply happened (its journal is there to finish, or
// the layer was emptied by it) the task's work is in the folder, and the
// task is judged then, never run again (its change would land twice).

// appliedTask is the note of one apply.
type appliedTask struct {
	Run    string `json:"run"`
	Task   string `json:"task"`
	Marked bool   `json:"marked"` // the run marked its task passes: true
	// Judged says the apply and the guard were done; Refused that they
	// refused or put back something of the run.
	Judged  bool `json:"judged,omitempty"`
	Refused bool `json:"refused,omitempty"`
}

func (r *runner) appliedPath(slot int) string {
	return loopdir.Private(r.priv).AppliedTask(wave.SlotLayerName(slot))
}

// noteApplying writes the note of rn's apply (after: the plan it left).
func (r *runner) noteApplying(rn *waveRun, after *Plan, judged, refused bool) error {
	return r.writeApplied(rn.slot, appliedTask{Run: rn.id, Task: rn.task.ID, Judged: judged, Refused: refused}, after)
}

// writeApplied writes, synced, the note n of the apply at slot, marked as
// the plan after (the plan the run left: nil when none reads) marks n.Task.
func (r *runner) writeApplied(slot int, n appliedTask, after *Plan) error {
	if after != nil {
		if t, ok := after.Find(n.Task); ok {
			n.Marked = t.Passes
		}
	}
	data, _ := json.Marshal(n)
	if err := guard.WriteFile(r.appliedPath(slot), data, 0o600, true); err != nil {
		return fmt.Errorf("cannot note the task of an apply: %w", err)
	}
	return nil
}

// appliedSaved drops the note of rn's apply: its verdict is saved.
func (r *runner) appliedSaved(rn *waveRun) {
	os.Remove(r.appliedPath(rn.slot))
}

// A single build run (parallel: 1) is noted the same way at slot 0: before
// its layer is applied, and again once the apply and the guard are done;
// the note goes once the step that judged its task is saved (build).

// singleApply says whether runAgent's run notes its apply: a build run on
// a task whose layer is applied.
func (r *runner) singleApply(phase, task string, counts bool) bool {
	return phase == "build" && task != "" && counts && r.layer != nil
}

// noteSingleApply writes the note of a single build run's apply (seq: its
// number among the loop's agent runs), marked as the plan in its layer
// (or, where it left none, the folder's) marks its task.
func (r *runner) noteSingleApply(seq int, task string, judged, refused bool) error {
	after := layerPlan(*r.layer)
	return r.writeApplied(0, appliedTask{Run: fmt.Sprintf("r%d", seq), Task: task, Judged: judged, Refused: refused}, after)
}

// singleSaved drops the note of a single run's apply: its verdict is saved.
func (r *runner) singleSaved() {
	os.Remove(r.appliedPath(0))
}

// landedTasks reads, before the applies a kill interrupted are finished,
// the notes of the applies whose work is in the folder: the apply's
// journal is there (resumeApply finishes it) or the apply emptied its
// layer. A note whose apply never started is dropped (its layer is
// dropped too; its task runs again).
func (r *runner) landedTasks() []appliedTask {
	var out []appliedTask
	for k := 0; k < spec.MaxParallel; k++ {
		p := r.appliedPath(k)
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var n appliedTask
		l, journal := slotLayer(r.dir, k)
		_, jerr := os.Stat(journal)
		switch {
		case json.Unmarshal(data, &n) != nil || n.Task == "":
		case jerr == nil || layerEmpty(l.Upper):
			out = append(out, n)
		}
		os.Remove(p)
	}
	return out
}

// layerEmpty says whether a layer's upper folder holds nothing.
func layerEmpty(upper string) bool {
	ents, err := os.ReadDir(upper)
	return errors.Is(err, fs.ErrNotExist) || err == nil && len(ents) == 0
}

// judgeLanded judges, at a restart, the tasks whose runs were applied
// before the engine died and whose verdicts were not saved. A task its
// run marked done, whose target changed, and of which nothing was refused
// passes: the cycle gate judges the work with the rest; it is not run
// again. Any other such task fails as its live verdict would have, and
// runs again on the tree its run left.
func (e *Engine) judgeLanded(landed []appliedTask) error {
	if len(landed) == 0 || e.st.Judged == nil {
		return nil
	}
	for _, n := range landed {
		task, ok := e.st.Judged.Find(n.Task)
		if !ok || task.Passes {
			continue
		}
		changed := guard.FileSum(e.path(task.TargetFile)) != e.st.TaskBase[task.ID]
		if !n.Marked || !changed || n.Refused || slices.Contains(e.run.deadFailed, task.ID) {
			continue
		}
		for i := range e.st.Judged.Tasks {
			if e.st.Judged.Tasks[i].ID == task.ID {
				e.st.Judged.Tasks[i].Passes = true
			}
		}
		e.st.TasksPassed++
		msg := fmt.Sprintf("%s: the run %s was applied before the engine died; its task is judged now and not run again (the cycle gate judges its work)", task.Title, n.Run)
		if !n.Judged {
			msg += "; the apply was finished at the restart, and what it refused was not recorded"
		}
		e.emit(record.Event{Event: record.TaskPassed, Task: task.ID, File: task.TargetFile, AgentRun: n.Run, Message: msg})
	}
	e.store.noteWriteErr(e.judged.writeJudged())
	e.lastPlan = clonePlan(e.st.Judged)
	return e.store.checkpoint()
}
