package guard

import (
	"fmt"
	"strings"
)

// Note is what the next prompt tells the agent of the changes refused in
// its run (ts): one VIOLATION line for each, the protected file restored
// or removed and by which rule, the loop file's change and what it
// weakened, the code refused for its tells.
func Note(ts []Tamper) string {
	var b strings.Builder
	for _, t := range ts {
		if t.Kind == TestAware {
			fmt.Fprintf(&b, "VIOLATION: your change to %s was refused: code that asks whether it runs under a test, prints a test runner's output or exits before the tests do never decides a check (%s). The folder keeps the file as it was. Make the code work for every caller.\n", t.File, t.What)
			continue
		}
		rule := ""
		if t.Rule != "" {
			rule = " by " + t.Rule
		}
		if t.What == "created" {
			fmt.Fprintf(&b, "VIOLATION: %s is protected%s and must not be created (the engine removed it). Change the code, not the checks.\n", t.File, rule)
		} else {
			fmt.Fprintf(&b, "VIOLATION: %s is protected%s and must not be edited (it was %s; the engine restored it). Change the code, not the checks.\n", t.File, rule, t.What)
		}
		if t.Why != "" {
			fmt.Fprintf(&b, "  The change weakened the loop: %s\n", t.Why)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
