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

// Every built-in prompt names the checks by their commands; the plan prompt
// and ralph's first attempt carry what the checks said before any agent ran.
func TestPromptNamesChecksAndBaseline(t *testing.T) {
	base := fence("output of the checks before any agent run", "$ go test ./...   # exit 1\nFAIL: TestA\n    a_test.go:3: want 2")
	for _, phase := range []string{"plan", "replan", "build", "ralph"} {
		d := PromptData{Objective: "x", Phase: phase, Iteration: 1, Verify: []string{"go test ./...", "go vet ./..."},
			ObjectiveVerify: []string{"sh objective.sh"}, Baseline: base}
		out, err := Render(Builtin(phase), d)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"# The checks that judge the work", "$ go test ./...\n$ go vet ./...\n", "$ sh objective.sh\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s prompt lacks %q:\n%s", phase, want, out)
			}
		}
		if hasBase := strings.Contains(out, "a_test.go:3: want 2"); hasBase != (phase == "plan" || phase == "ralph") {
			t.Errorf("%s prompt: baseline shown %v:\n%s", phase, hasBase, out)
		}
		// Once an attempt failed, ralph shows that failure instead.
		d.Failure = "~~~text\nboom\n~~~"
		out, _ = Render(Builtin(phase), d)
		if phase == "ralph" && strings.Contains(out, "a_test.go:3: want 2") {
			t.Errorf("ralph shows the baseline after a failed attempt:\n%s", out)
		}
		// No checks, no section.
		out, _ = Render(Builtin(phase), PromptData{Objective: "x", Phase: phase})
		if strings.Contains(out, "judge the work\n") {
			t.Errorf("%s prompt names checks it does not have:\n%s", phase, out)
		}
	}
}
