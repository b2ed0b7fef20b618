package initwiz

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/testcount"
)

// A check init ran once that exited 0 having run no tests is warned of;
// `cargo test`'s unreadable counts are not given go test's flags.
func TestRanReportNoTests(t *testing.T) {
	c, _ := testcount.ParseString("?   \texample.com/m\t[no test files]\n", nil)
	_, ws := RanReport(Ran{Command: "go test ./...", Exit: 0, Tests: c})
	if len(ws) != 1 || !strings.Contains(ws[0], "the check `go test ./...` exited 0 having run no tests") {
		t.Errorf("warnings %q", ws)
	}
	c, _ = testcount.ParseString("ok  \texample.com/m\t0.01s\n", nil)
	_, ws = RanReport(Ran{Command: "go test ./...", Exit: 0, Tests: c})
	if len(ws) != 1 || strings.Contains(ws[0], "no tests") || !strings.Contains(ws[0], "add -v") {
		t.Errorf("warnings %q", ws)
	}
	if got := CountFlags("cargo test --test more"); strings.Contains(got, "go test") {
		t.Errorf("CountFlags(cargo test): %q", got)
	}
	if got := CountFlags("cd x && go test ./..."); !strings.Contains(got, "add -v") {
		t.Errorf("CountFlags(go test): %q", got)
	}
	if w := HoldoutRunWarning("go test -run '^(TestX)$' ./a/", 0, testcount.Counts{NoTests: true}, 0, ""); !strings.Contains(w, "ran no test") {
		t.Errorf("HoldoutRunWarning: %q", w)
	}
}
