package confine

import (
	"fmt"
	"path"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// NoteSpecial records, through emit, what the apply of a run's changes left out of the
// loop folder of what the agent made: special bits (setuid, setgid,
// sticky) stripped, devices, fifos and sockets never applied.
func NoteSpecial(emit func(record.Event), phase, task string, changes []sandbox.LayerChange) {
	for _, c := range changes {
		if c.Applied && c.Stripped != "" {
			emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "layer_bits", File: c.Path,
				Message: fmt.Sprintf("%s was applied to the loop folder without the %s bit(s) the agent set: an apply keeps no special bits", c.Path, c.Stripped)})
		}
	}
}

// StripInPlace applies the same rule to a run that wrote the loop folder
// dir in place: its changed and created paths lose their special bits, and
// its devices, fifos and sockets are removed.
func StripInPlace(emit func(record.Event), dir, phase, task string, changed, created []string) {
	seen := map[string]bool{}
	var rels []string
	for _, rel := range append(append([]string{}, changed...), created...) {
		// The folders on the way too: the list of changes names files.
		for p := rel; p != "." && p != "/" && p != "" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			rels = append(rels, p)
		}
	}
	for _, c := range sandbox.StripInPlace(dir, rels) {
		if c.Why != "" {
			emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "layer_discarded", File: c.Path,
				Message: fmt.Sprintf("%s (%s) was removed from the loop folder: %s", c.Path, c.What, c.Why)})
			continue
		}
		NoteSpecial(emit, phase, task, []sandbox.LayerChange{c})
	}
}
