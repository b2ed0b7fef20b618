package loop

import (
	"strings"
	"testing"
)

// The failure block names the run that failed, not the run being prompted.
func TestPromptNamesTheFailedRun(t *testing.T) {
	for _, phase := range []string{"build", "ralph"} {
		d := PromptData{Objective: "x", Phase: phase, Iteration: 3, Failure: "~~~text\nboom\n~~~"}
		out, err := Render(Builtin(phase), d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "The last attempt (run 2) failed") || strings.Contains(out, "(run 3) failed") {
			t.Errorf("%s prompt:\n%s", phase, out)
		}
	}
}
