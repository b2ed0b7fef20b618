package wave

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// Which task an apply applied. Before a run of a wave (or the kept
// attempt of a best-of, or a single build run at slot 0) is applied, the
// engine notes, synced, in its private folder beside the apply's journal,
// which run and task it applies and whether the run marked its task done;
// after the apply and the guard, whether anything of the run was refused.
// The note goes once the task's verdict is saved. An engine killed in
// between finds it at the restart (Landed): when the apply happened (its
// journal is there to finish, or the layer was emptied by it) the task's
// work is in the folder, and the task is judged then, never run again
// (its change would land twice).

// Applied is the note of one apply.
type Applied struct {
	Run    string `json:"run"`
	Task   string `json:"task"`
	Marked bool   `json:"marked"` // the run marked its task passes: true
	// Judged says the apply and the guard were done; Refused that they
	// refused or put back something of the run.
	Judged  bool `json:"judged,omitempty"`
	Refused bool `json:"refused,omitempty"`
}

// appliedPath is where the note of the apply at slot is kept, priv being
// the engine's private folder of the loop.
func appliedPath(priv string, slot int) string {
	return loopdir.Private(priv).AppliedTask(SlotLayerName(slot))
}

// WriteApplied writes, synced, the note n of the apply at slot.
func WriteApplied(priv string, slot int, n Applied) error {
	data, _ := json.Marshal(n)
	if err := guard.WriteFile(appliedPath(priv, slot), data, 0o600, true); err != nil {
		return fmt.Errorf("cannot note the task of an apply: %w", err)
	}
	return nil
}

// AppliedSaved drops the note of the apply at slot: its verdict is saved.
func AppliedSaved(priv string, slot int) {
	os.Remove(appliedPath(priv, slot))
}

// Landed reads, before the applies a kill interrupted are finished, the
// notes of the applies whose work is in the loop folder dir: the apply's
// journal is there (the engine finishes it) or the apply emptied its
// layer. Every note read is dropped; one whose apply never started is
// left out (its layer is dropped too; its task runs again).
func Landed(dir, priv string) []Applied {
	var out []Applied
	for k := 0; k < spec.MaxParallel; k++ {
		p := appliedPath(priv, k)
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var n Applied
		name := SlotLayerName(k)
		_, jerr := os.Stat(loopdir.PrivateOf(dir).LayerJournal(name))
		switch {
		case json.Unmarshal(data, &n) != nil || n.Task == "":
		case jerr == nil || layerEmpty(loopdir.PrivateOf(dir).LayerUpper(name)):
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
