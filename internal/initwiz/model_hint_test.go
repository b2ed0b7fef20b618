package initwiz

import (
	"strings"
	"testing"
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
