package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAndDurations(t *testing.T) {
	l, err := Parse([]byte(`objective: "tests pass"
agent:
  timeout: 90s
budget:
  wall: 2d
`), "/x/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Shape != ShapeCycle || l.Agent.Backend != "claude" || l.Version != 1 {
		t.Errorf("defaults: shape %q backend %q version %d", l.Shape, l.Agent.Backend, l.Version)
	}
	if l.Agent.Timeout.D() != 90*time.Second || l.Budget.Wall.D() != 48*time.Hour {
		t.Errorf("durations: %s %s", l.Agent.Timeout, l.Budget.Wall)
	}
	if l.Agent.IdleTimeout.D() != DefaultIdleTimeout || l.Budget.Iterations != DefaultIterations || l.Budget.SameFailure != DefaultSameFailure {
		t.Errorf("defaults not applied: %+v %+v", l.Agent, l.Budget)
	}
	if l.Dir != "/x" || l.Name != "x" {
		t.Errorf("dir %q name %q", l.Dir, l.Name)
	}
}

func TestEveryProblemHasAPosition(t *testing.T) {
	_, err := Parse([]byte(`objective: ""
shape: spiral
agent:
  backend: command
  max_turns: -1
  colour: blue
budget:
  same_failure: 1
post_phases:
  - name: build
    prompt: "{{.Nope"
verify_baseline: sometimes
`), "loop.yaml")
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := []string{
		"objective is missing", `shape: "spiral"`, "agent.command is empty", "max_turns must be at least 1",
		`unknown field "colour"`, "same_failure must be 2 or more", `post phase name "build" is reserved`,
		"prompt:", "needs a done signal", `verify_baseline: "sometimes"`,
	}
	msg := se.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in:\n%s", w, msg)
		}
	}
	for _, p := range se.Problems {
		if p.Line == 0 || p.Column == 0 {
			t.Errorf("problem without a position: %s", p)
		}
	}
}

func TestHomeExpansion(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.WriteFile(filepath.Join(home, "loop.yaml"), []byte("objective: x\n"), 0o644)
	l, err := Load("~/loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != filepath.Join(home, "loop.yaml") {
		t.Errorf("path %q", l.Path)
	}
}

func TestPhaseAgents(t *testing.T) {
	l, err := Parse([]byte(`objective: x
agent: {backend: claude, model: sonnet, max_turns: 10}
agents:
  plan: {model: opus}
  reviewer: {backend: codex}
`), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := l.AgentFor("plan", false); a.Backend != "claude" || a.Model != "opus" || a.MaxTurns != 10 {
		t.Errorf("plan agent %+v", a)
	}
	if a := l.AgentFor("replan", false); a.Model != "opus" {
		t.Errorf("replan falls back to plan: %+v", a)
	}
	if a := l.AgentFor("reviewer", false); a.Backend != "codex" || a.Model != "" {
		t.Errorf("a different backend must not inherit the model: %+v", a)
	}
	if a := l.AgentFor("build", false); a.Model != "sonnet" {
		t.Errorf("build agent %+v", a)
	}
}

func TestRedactField(t *testing.T) {
	for src, off := range map[string]bool{"redact: off\n": true, "redact: {off: true}\n": true, "redact: {names: [A]}\n": false, "": false} {
		l, err := Parse([]byte("objective: x\nverify: [\"true\"]\n"+src), "/x/loop.yaml")
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if l.Redact.Off != off {
			t.Errorf("%q: off = %v", src, l.Redact.Off)
		}
	}
	for src, want := range map[string]string{
		"redact: maybe\n":                `3:9: redact: "maybe" is not known`,
		"redact: {patterns: [\"(a\"]}\n": "3:21: redact.patterns[0]: error parsing regexp",
		"redact: {patterns: [\"x*\"]}\n": "matches empty text",
		"redact: {nmes: [A]}\n":          `unknown field "nmes"`,
	} {
		_, err := Parse([]byte("objective: x\nverify: [\"true\"]\n"+src), "/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

// flaky: fail, rerun N (2 to MaxFlakyRuns) or quarantine; anything else is
// refused at its line and column.
func TestFlakyPolicy(t *testing.T) {
	for v, want := range map[string]string{"": "fail 1", "fail": "fail 1", "quarantine": "quarantine 1", "rerun 3": "rerun 3", " rerun  20 ": "rerun 20"} {
		mode, runs, err := ParseFlaky(v)
		if err != nil || fmt.Sprintf("%s %d", mode, runs) != want {
			t.Errorf("ParseFlaky(%q) = %s %d %v, want %s", v, mode, runs, err, want)
		}
	}
	for _, v := range []string{"rerun", "rerun 1", "rerun 21", "rerun x", "sometimes", "fail 2"} {
		if _, _, err := ParseFlaky(v); err == nil {
			t.Errorf("ParseFlaky(%q) accepted", v)
		}
		_, err := Parse([]byte("objective: x\nagent: {backend: command, command: x}\nverify: [\"true\"]\nflaky: "+v+"\n"), "loop.yaml")
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(se.Error(), "loop.yaml:4:8: flaky: ") {
			t.Errorf("flaky: %s: %v", v, err)
		}
	}
	l, err := Parse([]byte("objective: x\nagent: {backend: command, command: x}\nverify: [\"true\"]\n"), "loop.yaml")
	if err != nil || l.Flaky != FlakyFail {
		t.Errorf("default flaky %q %v", l.Flaky, err)
	}
}

// checks.network: none by default; host is a warning that says what it
// gives up; anything else is an error at its line and column.
func TestChecksNetwork(t *testing.T) {
	l, err := Parse([]byte("objective: x\nverify: [go test -v ./...]\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Checks.Network != ChecksNetworkNone {
		t.Errorf("default checks.network %q", l.Checks.Network)
	}
	for _, w := range l.Warnings() {
		if strings.Contains(w, "checks.network") {
			t.Errorf("warning without host: %s", w)
		}
	}
	l, err = Parse([]byte("objective: x\nverify: [go test -v ./...]\nchecks:\n  network: host\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range l.Warnings() {
		found = found || strings.Contains(w, "checks.network is host") && strings.Contains(w, "loopback")
	}
	if !found {
		t.Errorf("no warning for checks.network: host in %q", l.Warnings())
	}
	_, err = Parse([]byte("objective: x\nchecks:\n  network: bridge\n"), "loop.yaml")
	var se *Error
	if !errors.As(err, &se) || len(se.Problems) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	if p := se.Problems[0]; p.Line != 3 || p.Column != 12 || !strings.Contains(p.Msg, `checks.network: "bridge" is not known (none or host)`) {
		t.Errorf("problem %+v", p)
	}
}
