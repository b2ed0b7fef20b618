package initwiz

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/testcount"
)

// The model question follows the chosen backend: claude's families for
// claude, none of them for codex.
func TestModelHint(t *testing.T) {
	if h := ModelHint("claude"); !strings.Contains(h, "e.g. sonnet or opus") {
		t.Errorf("claude: %q", h)
	}
	if h := ModelHint("codex"); strings.Contains(h, "sonnet") || strings.Contains(h, "opus") || !strings.Contains(h, "codex CLI's model name") {
		t.Errorf("codex: %q", h)
	}
	if h := ModelHint("gemini"); !strings.Contains(h, "gemini-2.5-flash or gemini-2.5-pro") {
		t.Errorf("gemini: %q", h)
	}
	a := Defaults()
	a.Objective, a.Backend, a.Verify = "x passes", "codex", []string{"true"}
	if out := string(Render(a)); strings.Contains(out, "sonnet") || !strings.Contains(out, "# model: ...") {
		t.Errorf("codex loop file:\n%s", out)
	}
	a.Backend = "claude"
	if out := string(Render(a)); !strings.Contains(out, "  # model: sonnet ") {
		t.Errorf("claude loop file:\n%s", out)
	}
}

// The flag that names each test is offered with the whole check, never
// added: pytest -rA, unittest -v after the module, through an npm script.
func TestNamedCommand(t *testing.T) {
	for _, tc := range []struct{ cmd, runner, want string }{
		{"python3 -m pytest", "pytest", "python3 -m pytest -rA"},
		{"PYTHONPATH=src python3 -m unittest discover -s tests", "unittest", "PYTHONPATH=src python3 -m unittest -v discover -s tests"},
		{"npm test", "jest", "npm test -- --verbose"},
		{"npm test -- --ci", "jest", "npm test -- --ci --verbose"},
		{"npx vitest run", "vitest", "npx vitest run --reporter=verbose"},
		{"pytest | tee log", "pytest", ""},
		{"go test ./...", "go", ""},
	} {
		if got := NamedCommand(tc.cmd, tc.runner); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.cmd, got, tc.want)
		}
	}
	line, _ := RanReport(Ran{Command: "python3 -m pytest", Tests: testcountCounts("pytest", 3)})
	if !strings.Contains(line, `init leaves the check as it is: to have them named, pass --verify "python3 -m pytest -rA"`) {
		t.Errorf("line %q", line)
	}
}

func testcountCounts(runner string, passed int) testcount.Counts {
	return testcount.Counts{Known: true, Runner: runner, Passed: passed}
}
