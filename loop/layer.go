package loop

import (
	"fmt"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/wave"
)

// The layer. Under bubblewrap an agent never writes the loop folder, its
// HOME or its caches: each is a copy-on-write layer (sandbox.Layer) whose
// writes land in the engine's private folder. After the run, with every
// process of it gone, the engine applies the loop folder's layer: what the
// agent wrote in .git and working-records/ is discarded, the rest reaches
// the folder and is judged there as before (protected files restored, the
// loop file judged field by field). The layers over HOME and the caches
// are never applied: they persist from run to run of the loop, so an agent
// CLI keeps its sessions and logins, while the checks and the engine's git
// read the user's own HOME and caches, which no agent wrote.

// endRun ends the watch of a run's changes, after applying its layer (only
// then does what the agent wrote reach the loop folder): what changed,
// what was created, and the layer's discarded changes to the engine's
// records, as tampering.
func (r *runner) endRun(phase, task string, rc *guard.RunChanges) (changed, created []string, tamper []guard.Tamper, err error) {
	tamper, lerr := r.applyLayer(phase, task)
	for _, l := range r.trees {
		// overlayfs leaves a folder of mode 000 in its work folder; nothing
		// is mounted any more (HOME's built view keeps its folders for the
		// next run: sandbox.ClearRunWork).
		if cerr := sandbox.ClearRunWork(l); cerr != nil && lerr == nil {
			lerr = cerr
		}
	}
	changed, created, err = r.guard.End(rc)
	if lerr != nil {
		err = lerr
	}
	if r.layer == nil {
		// No layer judged the run's files before they reached the folder:
		// they are judged where they are.
		confine.StripInPlace(r.emit, r.dir, phase, task, changed, created)
		tamper = append(tamper, r.apply.FolderTells(changed, created)...)
		if perr := r.judge().Pristine().Lost(created, changed); perr != nil {
			r.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "pristine", Message: "cannot note the dependency files the run changed: " + perr.Error()})
		}
	}
	return changed, created, tamper, err
}

// applyLayer applies the loop folder's layer after a run
// (confine.Applier.Apply) and returns its refused changes as tampering,
// for the run's verdict.
func (r *runner) applyLayer(phase, task string) ([]guard.Tamper, error) {
	if r.layer == nil || r.viewOnly {
		return nil, nil // a view-only run's layer is its caller's to read and clear
	}
	return r.apply.Apply(*r.layer, loopdir.PrivateOf(r.dir).LayerJournal(slotLayerName(r.slot)), phase, task)
}

// noteTell keeps a tell that did not refuse a change for the audit (the
// last 50).
func (r *runner) noteTell(line string) {
	// Under the state's save lock: attempts of a best-of are judged at
	// once (bestof_judging.go).
	r.locked(func() {
		r.st.Tells = append(r.st.Tells, line)
		if n := len(r.st.Tells); n > 50 {
			r.st.Tells = r.st.Tells[n-50:]
		}
	})
}

// singleApply says whether runAgent's run notes its apply: a build run on
// a task whose layer is applied.
func (r *runner) singleApply(phase, task string, counts bool) bool {
	return phase == "build" && task != "" && counts && r.layer != nil
}

// noteSingleApply writes the note of a single build run's apply (seq: its
// number among the loop's agent runs), marked as the plan in its layer
// (or, where it left none, the folder's) marks its task.
func (r *runner) noteSingleApply(seq int, task string, judged, refused bool) error {
	after := wave.LayerPlan(*r.layer)
	return r.writeApplied(0, wave.Applied{Run: fmt.Sprintf("r%d", seq), Task: task, Judged: judged, Refused: refused}, after)
}

// singleSaved drops the note of a single run's apply: its verdict is saved.
func (r *runner) singleSaved() {
	wave.AppliedSaved(r.priv, 0)
}

// slotLayerName is the name of the loop folder's layer of a run in slot k.
func slotLayerName(k int) string { return wave.SlotLayerName(k) }

// slotLayer is the layer over the loop folder of the run in slot k, and
// the journal of its apply.
func slotLayer(dir string, k int) (sandbox.Layer, string) {
	name := slotLayerName(k)
	return confine.LayerOf(dir, name, dir), loopdir.PrivateOf(dir).LayerJournal(name)
}

// writeApplied writes the note n of the apply at slot, marked as the plan
// after (the plan the run left: nil when none reads) marks n.Task.
func (r *runner) writeApplied(slot int, n wave.Applied, after *Plan) error {
	if after != nil {
		if t, ok := after.Find(n.Task); ok {
			n.Marked = t.Passes
		}
	}
	return wave.WriteApplied(r.priv, slot, n)
}
