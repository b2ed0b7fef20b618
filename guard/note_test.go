package guard

import (
	"strings"
	"testing"
)

// One line a refused change: an edited protected file and its rule, the
// loop file with what its change weakened, a created one, code refused
// for its tells; nothing refused, no note.
func TestNote(t *testing.T) {
	got := Note([]Tamper{
		{File: "a_test.go", What: "modified", Rule: "go tests"},
		{File: "loop.yaml", What: "modified", Why: "budget raised"},
		{File: "b_test.go", What: "created"},
		{Kind: TestAware, File: "a.go", What: "reads PYTEST_CURRENT_TEST"},
	})
	want := []string{
		"VIOLATION: a_test.go is protected by go tests and must not be edited (it was modified; the engine restored it). Change the code, not the checks.",
		"VIOLATION: loop.yaml is protected and must not be edited (it was modified; the engine restored it). Change the code, not the checks.",
		"  The change weakened the loop: budget raised",
		"VIOLATION: b_test.go is protected and must not be created (the engine removed it). Change the code, not the checks.",
		"VIOLATION: your change to a.go was refused: code that asks whether it runs under a test, prints a test runner's output or exits before the tests do never decides a check (reads PYTEST_CURRENT_TEST). The folder keeps the file as it was. Make the code work for every caller.",
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("Note:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if Note(nil) != "" {
		t.Error("a note of nothing refused")
	}
}
