package agent

import (
	"slices"
	"testing"
)

// The built-in backends, in the order the loop file's validation, init's
// list and doctor have always shown them (other test files may register
// more).
func TestBuiltinBackendsInOrder(t *testing.T) {
	builtin := []string{"claude", "codex", "gemini", "command"}
	var got []string
	for _, n := range Names() {
		if slices.Contains(builtin, n) {
			got = append(got, n)
		}
	}
	if !slices.Equal(got, builtin) {
		t.Errorf("built-in backends %v", got)
	}
	var clis []string
	for _, b := range CLIs() {
		if slices.Contains(builtin, b.Name) {
			clis = append(clis, b.Name+" "+b.NPMPackage+"@"+b.Version)
		}
	}
	if !slices.Equal(clis, []string{"claude @anthropic-ai/claude-code@2.1.328", "codex @openai/codex@0.169.0", "gemini @google/gemini-cli@0.61.0"}) {
		t.Errorf("CLIs %v", clis)
	}
}

// The review's other model, as loop/review.go chose it before the
// families moved into each backend's declaration.
func TestBuiltinOtherModel(t *testing.T) {
	for _, tc := range []struct{ backend, model, want string }{
		{"claude", "", "opus"}, {"claude", "sonnet", "opus"}, {"claude", "haiku", "opus"},
		{"claude", "claude-opus-4-1", "sonnet"}, {"claude", "OPUS", "sonnet"}, {"claude", "claude-sonnet-4-5", "opus"},
		{"gemini", "", "gemini-2.5-pro"}, {"gemini", "gemini-2.5-flash", "gemini-2.5-pro"}, {"gemini", "gemini-2.5-pro", "gemini-2.5-flash"},
		{"gemini", "gemini-2.5-flash-lite", "gemini-2.5-pro"}, {"gemini", "gemini-3-pro-preview", "gemini-2.5-flash"},
		{"codex", "", ""}, {"codex", "gpt-5", ""}, {"command", "x", ""}, {"unknown", "opus", ""},
	} {
		if got := OtherModel(tc.backend, tc.model); got != tc.want {
			t.Errorf("OtherModel(%s, %q) = %q, want %q", tc.backend, tc.model, got, tc.want)
		}
	}
}

// Register (a bare adapter, as the loop's tests do) keeps a declared
// backend's declaration.
func TestRegisterKeepsDeclaration(t *testing.T) {
	RegisterBackend(Backend{Name: "regkeep", Program: "regkeep", NPMPackage: "p", New: func() Adapter { return commandAdapter{} }})
	Register("regkeep", func() Adapter { return claudeAdapter{} })
	b, ok := Find("regkeep")
	if !ok || b.NPMPackage != "p" || b.Label != "regkeep" {
		t.Errorf("%+v", b)
	}
	if ad, err := Lookup("regkeep"); err != nil || ad.Name() != "claude" {
		t.Errorf("adapter %v %v", ad, err)
	}
	if _, err := Lookup("nosuch"); err == nil {
		t.Error("an unknown backend has no adapter")
	}
}
