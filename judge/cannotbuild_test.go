package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// A compile error only its own file can fix stops the loop when that file
// is protected, and not when the agent may change it (protect_except, or
// a product file).
func TestCannotBuild(t *testing.T) {
	dir := t.TempDir()
	for f, body := range map[string]string{"go.mod": "module x\n", "calc.go": "package calc\n", "calc_test.go": "package calc\n"} {
		os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644)
	}
	l := &spec.Loop{Dir: dir, Objective: "Add adds"}
	syntax := "# x\ncalc_test.go:7:29: expected '}', found 'EOF'\nFAIL\tx [setup failed]\n"
	got := CannotBuild("go test ./...", syntax, 1, dir, l)
	for _, want := range []string{"the check `go test ./...` cannot build its tests (exit 1): calc_test.go:7:29: expected '}', found 'EOF'", "default rule go-tests", `protect_except: ["calc_test.go"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	for name, tc := range map[string]struct {
		out  string
		exit int
		l    *spec.Loop
	}{
		"passed":         {syntax, 0, l},
		"product file":   {"./calc.go:3:1: syntax error: unexpected EOF\n", 1, l},
		"type error":     {"./calc_test.go:5:5: undefined: Add\n", 1, l},
		"not there":      {"other_test.go:1:1: expected 'package'\n", 1, l},
		"outside":        {"../calc_test.go:1:1: expected 'package'\n", 1, l},
		"protect_except": {syntax, 1, &spec.Loop{Dir: dir, Objective: "fix the test", ProtectExcept: []string{"calc_test.go"}}},
		"no loop":        {syntax, 1, nil},
	} {
		if got := CannotBuild("c", tc.out, tc.exit, dir, tc.l); got != "" {
			t.Errorf("%s: %q", name, got)
		}
	}
	// Through the baseline's reading of a check's log.
	p := filepath.Join(t.TempDir(), "check.log")
	os.WriteFile(p, []byte(syntax), 0o600)
	j := &Judge{Dir: dir, Spec: func() *spec.Loop { return l }}
	r := CheckResult{}
	r.Command, r.ExitCode, r.Output = "go test ./...", 1, p
	if got := j.RunnerCannotStart([]CheckResult{r}); !strings.Contains(got, "cannot build its tests") {
		t.Errorf("baseline: %q", got)
	}
}
