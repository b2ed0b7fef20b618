package confine

import (
	"fmt"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/record"
)

// Violation is the record of a change of a run (phase, task) that did not
// stand: a secret kept out of the loop folder, code refused for its tells,
// a protected file restored or removed, the loop file's change that
// weakened the loop.
func Violation(phase, task string, t guard.Tamper) record.Event {
	if t.Rule == SecretRule {
		return record.Event{Event: record.Violation, Phase: phase, Task: task, Kind: "secret_in_change", File: t.File,
			Message: fmt.Sprintf("%s was not applied to the loop folder: %s (the value is not repeated here); keep secrets out of the loop's files", t.File, t.What)}
	}
	if t.Kind == guard.TestAware {
		return record.Event{Event: record.Violation, Phase: phase, Task: task, Kind: guard.TestAware, File: t.File,
			Message: fmt.Sprintf("%s: the change was refused: its code asks whether it runs under a test or forges a test runner's output (%s); %s", t.File, t.What, t.Rule)}
	}
	msg := fmt.Sprintf("%s: a protected file was %s; it was restored", t.File, t.What)
	if t.What == "created" {
		// Nothing was there to restore: the new file was removed.
		msg = fmt.Sprintf("%s: a new protected file was created; it was removed", t.File)
	}
	if t.Rule != "" {
		msg += " (protected by " + t.Rule + ")"
	}
	if t.Why != "" {
		msg = fmt.Sprintf("%s was changed during the %s run in a way that weakens the loop (%s); it was restored. To loosen a running loop, pause it (looprinter pause), edit, resume", t.File, phase, t.Why)
	}
	return record.Event{Event: record.Violation, Phase: phase, Task: task, Kind: "protected_file", File: t.File, Message: msg}
}
