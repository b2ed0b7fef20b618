package loop

import (
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
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
	// Under the state's save lock: attempts of a best-of are judged at
	// once (bestof_judging.go).
	r.locked(func() {
		r.st.Tells = append(r.st.Tells, line)
		if n := len(r.st.Tells); n > 50 {
			r.st.Tells = r.st.Tells[n-50:]
		}
	})
}
