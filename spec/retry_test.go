package spec

import (
	"strings"
	"testing"
)

// availableBestOf lets a test validate best_of above 1 as a version that
// runs attempts at once would.
func availableBestOf(t *testing.T) {
	old := BestOfAvailable
	BestOfAvailable = true
	t.Cleanup(func() { BestOfAvailable = old })
}

// best_of above 1 is accepted where attempts can get layers (sandbox auto
// or bwrap) and refused, with the reason, under a sandbox without layers.
func TestRetryRefusedWithoutLayers(t *testing.T) {
	if _, err := Parse([]byte("objective: x\nverify: [\"true\"]\nretry:\n  best_of: 3\n"), "/tmp/x/loop.yaml"); err != nil {
		t.Fatalf("auto: %v", err)
	}
	for _, sb := range []string{"off", "landlock", "seatbelt"} {
		_, err := Parse([]byte("objective: x\nverify: [\"true\"]\nsandbox: "+sb+"\nretry:\n  best_of: 3\n"), "/tmp/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), "5:12: retry.best_of: 3: sandbox "+sb+" gives no attempt a copy-on-write layer") {
			t.Errorf("%s: got %v", sb, err)
		}
	}
	if _, err := Parse([]byte("objective: x\nverify: [\"true\"]\nsandbox: off\nretry: {best_of: 1}\n"), "/tmp/x/loop.yaml"); err != nil {
		t.Fatalf("best_of 1: %v", err)
	}
	l, err := Parse([]byte("objective: x\nverify: [\"true\"]\nretry: {best_of: 2}\n"), "/tmp/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := l.BestOfWarning("landlock", false); !strings.Contains(w, "retry.best_of: 2: a failed task runs again once at a time here") {
		t.Errorf("warning: %q", w)
	}
	if w := l.BestOfWarning("bwrap", true); w != "" {
		t.Errorf("bwrap with layers: %q", w)
	}
}

func TestRetryBadInput(t *testing.T) {
	availableBestOf(t)
	head := "objective: x\nverify: [\"go test ./...\"]\nagent:\n  backend: claude\nretry:\n"
	cases := []struct{ body, want string }{
		{"  best_of: 11\n", "6:12: retry.best_of: 11: want the attempts of a failed task run at once, from 2 to 10"},
		{"  best_of: -1\n", "6:12: retry.best_of: -1"},
		{"  best_of: three\n", "6:12: retry.best_of: want a whole number"},
		{"  best_of: 3\n  after: often\n", "7:10: retry.after: \"often\" is not known (failed"},
		{"  best_of: 3\n  agents:\n    - {backend: nope, model: x}\n", "8:17: retry.agents[0].backend: \"nope\" is not a backend"},
		{"  best_of: 3\n  agents:\n    - {model: a}\n    - {}\n", "retry.agents[1]: name the attempt's agent"},
		{"  best_of: 3\n  agents:\n    - {backend: command}\n", "retry.agents[0].backend: command runs the build agent's command, and the build agent is claude"},
		{"  agents:\n    - {model: opus}\n", "retry.agents names agents but retry.best_of is 0"},
		{"  best_of: 3\n  tries: 2\n", `unknown field "tries" in retry`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(head+c.body), "/tmp/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
	_, err := Parse([]byte("shape: ralph\nobjective: x\nverify: [\"true\"]\nretry: {best_of: 2}\n"), "/tmp/x/loop.yaml")
	if err == nil || !strings.Contains(err.Error(), "4:18: retry.best_of: 2: only the cycle shape") {
		t.Errorf("ralph with best_of: %v", err)
	}
}

func TestRetryDefaultsAndAgents(t *testing.T) {
	availableBestOf(t)
	l, err := Parse([]byte("objective: x\nverify: [\"true\"]\nagent: {backend: claude, model: sonnet}\n"), "/tmp/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Retry.BestOf != 0 || l.Retry.After != RetryAfterFailed || l.RetryBestOf(5, 5) != 1 {
		t.Fatalf("no retry: %+v, %d", l.Retry, l.RetryBestOf(5, 5))
	}
	if a := l.AttemptAgent(2); a.Backend != "claude" || a.Model != "sonnet" {
		t.Fatalf("attempt without retry agents: %+v", a)
	}
	l, err = Parse([]byte("objective: x\nverify: [\"true\"]\nagent: {backend: claude, model: sonnet}\nretry:\n  best_of: 3\n  agents:\n    - {model: opus}\n    - {backend: codex, model: gpt-5}\n"), "/tmp/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ backend, model string }{{"claude", "opus"}, {"codex", "gpt-5"}, {"claude", "opus"}}
	for k, w := range want {
		if a := l.AttemptAgent(k); a.Backend != w.backend || a.Model != w.model {
			t.Errorf("attempt %d: %s/%s, want %s/%s", k, a.Backend, a.Model, w.backend, w.model)
		}
	}
	for _, c := range []struct {
		after        string
		failed, same int
		want         int
	}{
		{RetryAfterFailed, 0, 0, 1}, {RetryAfterFailed, 1, 1, 3},
		{RetryAfterSameFailure, 1, 1, 1}, {RetryAfterSameFailure, 2, 1, 1}, {RetryAfterSameFailure, 2, 2, 3},
	} {
		l.Retry.After = c.after
		if got := l.RetryBestOf(c.failed, c.same); got != c.want {
			t.Errorf("after %s, %d failed, %d same: %d attempts, want %d", c.after, c.failed, c.same, got, c.want)
		}
	}
}
