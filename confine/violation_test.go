package confine

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/record"
)

// Each refused change is one violation record of its kind: a secret (even
// in code with tells: the secret is what is said), a tell, a protected
// file restored or removed and by which rule, the loop file's weakening.
func TestViolation(t *testing.T) {
	for _, c := range []struct {
		t        guard.Tamper
		kind     string
		contains string
	}{
		{guard.Tamper{File: "a.env", What: "refused: it holds an API key", Rule: SecretRule}, "secret_in_change", "a.env was not applied to the loop folder: refused: it holds an API key (the value is not repeated here)"},
		{guard.Tamper{Kind: guard.TestAware, File: "k.go", What: "an API key", Rule: SecretRule}, "secret_in_change", "k.go was not applied"},
		{guard.Tamper{Kind: guard.TestAware, File: "a.go", What: "reads PYTEST_CURRENT_TEST", Rule: "tells"}, guard.TestAware, "a.go: the change was refused: its code asks whether it runs under a test or forges a test runner's output (reads PYTEST_CURRENT_TEST); tells"},
		{guard.Tamper{File: "a_test.go", What: "modified", Rule: "go tests"}, "protected_file", "a_test.go: a protected file was modified; it was restored (protected by go tests)"},
		{guard.Tamper{File: "b_test.go", What: "created"}, "protected_file", "b_test.go: a new protected file was created; it was removed"},
		{guard.Tamper{File: "loop.yaml", What: "modified", Why: "budget raised"}, "protected_file", "loop.yaml was changed during the build run in a way that weakens the loop (budget raised); it was restored"},
	} {
		ev := Violation("build", "T1", c.t)
		if ev.Event != record.Violation || ev.Kind != c.kind || ev.File != c.t.File || ev.Phase != "build" || ev.Task != "T1" {
			t.Errorf("%s: %+v, want a %s violation of build T1", c.t.File, ev, c.kind)
		}
		if !strings.Contains(ev.Message, c.contains) {
			t.Errorf("%s: message %q lacks %q", c.t.File, ev.Message, c.contains)
		}
	}
	if m := Violation("build", "", guard.Tamper{File: "b_test.go", What: "created", Rule: "go tests"}).Message; m != "b_test.go: a new protected file was created; it was removed (protected by go tests)" {
		t.Errorf("created with a rule: %q", m)
	}
}
