package spec

import (
	"strings"
	"testing"
	"time"
)

func TestVerifyStrengthForms(t *testing.T) {
	head := "objective: x\nverify: [\"go test ./...\"]\n"
	cases := []struct {
		body string
		want VerifyStrength
	}{
		{"", VerifyStrength{}},
		{"verify_strength: off\n", VerifyStrength{}},
		{"verify_strength: on\n", VerifyStrength{On: true, Budget: Duration(5 * time.Minute), MaxMutants: 40}},
		{"verify_strength: {min: 0.6}\n", VerifyStrength{On: true, Min: 0.6, Budget: Duration(5 * time.Minute), MaxMutants: 40}},
		{"verify_strength: {min: 1, budget: 90s, max_mutants: 7}\n", VerifyStrength{On: true, Min: 1, Budget: Duration(90 * time.Second), MaxMutants: 7}},
		{"verify_strength:\n  on: false\n  min: 0.5\n", VerifyStrength{Min: 0.5}},
	}
	for _, c := range cases {
		l, err := Parse([]byte(head+c.body), "/tmp/x/loop.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		if l.VerifyStrength != c.want {
			t.Errorf("%q: got %+v, want %+v", c.body, l.VerifyStrength, c.want)
		}
	}
}

func TestVerifyStrengthBadInput(t *testing.T) {
	head := "objective: x\nverify: [\"go test ./...\"]\n"
	cases := []struct{ body, want string }{
		{"verify_strength: sometimes\n", "3:18: verify_strength: \"sometimes\" is not known"},
		{"verify_strength: {min: 1.5}\n", "verify_strength.min: 1.5 is not a share"},
		{"verify_strength:\n  min: lots\n", "4:8: verify_strength.min: want a number from 0 to 1"},
		{"verify_strength:\n  max_mutants: -3\n", "4:16: verify_strength.max_mutants: -3"},
		{"verify_strength:\n  budget: soon\n", "4:11: verify_strength.budget"},
		{"verify_strength:\n  mni: 0.5\n", "unknown field \"mni\""},
	}
	for _, c := range cases {
		_, err := Parse([]byte(head+c.body), "/tmp/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
}

func TestEscalateBadInput(t *testing.T) {
	head := "objective: x\nverify: [\"go test ./...\"]\nagent:\n  backend: claude\n  escalate:\n"
	cases := []struct{ body, want string }{
		{"    - {after: 0, model: opus}\n", "6:15: agent.escalate[0].after: want the failures"},
		{"    - {after: 2, backend: nope, model: x}\n", "agent.escalate[0].backend: \"nope\" is not a backend"},
		{"    - {after: 2}\n", "agent.escalate[0]: name the stronger agent"},
		{"    - {after: 2, model: a}\n    - {after: 2, model: b}\n", "agent.escalate[1].after: 2 must be more than the step before's 2"},
		{"    - {after: two, model: a}\n", "agent.escalate[0].after: want a whole number"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(head+c.body), "/tmp/x/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
	l, err := Parse([]byte(head+"    - {after: 2, model: opus}\n    - {after: 4, backend: codex, model: gpt-5}\n"), "/tmp/x/loop.yaml")
	if err != nil || len(l.Agent.Escalate) != 2 || l.Agent.Escalate[1] != (Escalation{After: 4, Backend: "codex", Model: "gpt-5"}) {
		t.Fatalf("%+v, %v", l, err)
	}
}
