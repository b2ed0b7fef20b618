package loop

import (
	"fmt"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
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

// prepareLayers makes the layers' folders. A loop layer that holds what a
// run wrote before the engine died is dropped: that run's work is lost, and
// the loop folder was never touched by it.
func (r *runner) prepareLayers(layers []sandbox.Layer) error {
	for i, l := range layers {
		left, err := sandbox.PrepareLayer(l)
		if err != nil {
			return fmt.Errorf("cannot prepare the copy-on-write layer over %s: %w", l.Target, err)
		}
		if i == 0 && left {
			if err := sandbox.ClearLayer(l); err != nil {
				return fmt.Errorf("cannot drop the layer a dead run left: %w", err)
			}
			r.emit(record.Event{Event: record.Warning, Kind: "layer_dropped", Message: "the copy-on-write layer of an agent run that died with the engine was dropped: nothing of that run reached the loop folder"})
		}
	}
	return nil
}

// resumeApply finishes the apply of the loop folder's layer that the
// engine died in the middle of (its journal says what was decided and what
// was done): the folder gets all of that run's judged changes, never a
// part of them, and the run is then judged like any run that died.
func (r *runner) resumeApply() error {
	for k := 0; k < spec.MaxParallel; k++ {
		if err := r.resumeApplySlot(k); err != nil {
			return err
		}
	}
	return nil
}

// resumeApplySlot is resumeApply for the layer of slot k (parallel: N).
func (r *runner) resumeApplySlot(k int) error {
	l, journal := slotLayer(r.dir, k)
	changes, found, err := sandbox.ResumeApply(l, journal)
	if !found {
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot finish applying the layer of the run that died with the engine: %w", err)
	}
	n := 0
	for _, c := range changes {
		if c.Applied {
			n++
		}
	}
	r.emit(record.Event{Event: record.Warning, Kind: "layer_apply_finished", Message: fmt.Sprintf("the engine died while applying an agent run's layer to the loop folder: the apply was finished now (%s), and the run is judged as one that died", plural(n, "path"))})
	return nil
}

// endRun ends the watch of a run's changes, after applying its layer (only
// then does what the agent wrote reach the loop folder): what changed,
// what was created, and the layer's discarded changes to the engine's
// records, as tampering.
func (r *runner) endRun(phase, task string, rc *guard.RunChanges) (changed, created []string, tamper []guard.Tamper, err error) {
	tamper, lerr := r.applyLayer(phase, task)
	for _, l := range r.trees {
		// overlayfs leaves a folder of mode 000 in its work folder; nothing
		// is mounted any more.
		if cerr := sandbox.ClearWork(l); cerr != nil && lerr == nil {
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
	r.st.Tells = append(r.st.Tells, line)
	if n := len(r.st.Tells); n > 50 {
		r.st.Tells = r.st.Tells[n-50:]
	}
}
