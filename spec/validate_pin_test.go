package spec

// Tests that pin the loop file's checks and the diff's edges (issue 18):
// each fails if the comparison it is named after changes.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A fallback on the command backend needs its command, and the problem is
// at the fallback; one with its command, or on another backend, is fine.
func TestPinFallbackCommandNeeded(t *testing.T) {
	src := "objective: x\nagent:\n  backend: codex\n  fallback:\n    - {backend: command}\n"
	problemAt(t, src, 5, 7, "agent.fallback[0].command is empty")
	for _, ok := range []string{"{backend: command, command: ./b.sh}", "{backend: claude}"} {
		src := "objective: x\nagent:\n  backend: codex\n  fallback:\n    - " + ok + "\n"
		if _, err := Parse([]byte(src), "loop.yaml"); err != nil {
			t.Errorf("fallback %s: %v", ok, err)
		}
	}
}

// agents: takes a post phase's name as a key; a name that is neither a
// phase nor a post phase is refused where it is written.
func TestPinAgentsKeyedByPostPhase(t *testing.T) {
	post := "post_phases:\n  - {name: docs, prompt: write the docs, done: DOCS}\n"
	l, err := Parse([]byte("objective: x\n"+post+"agents:\n  docs: {model: haiku}\n"), "loop.yaml")
	if err != nil {
		t.Fatalf("agents.docs for post phase docs: %v", err)
	}
	if got := l.AgentFor("docs", true).Model; got != "haiku" {
		t.Errorf("post phase docs runs model %q, want haiku", got)
	}
	problemAt(t, "objective: x\n"+post+"agents:\n  dcs: {model: haiku}\n", 5, 8, "agents.dcs: no such phase")
}

// The warnings of a weak loop file are about the cycle shape's gates only:
// ralph needs verify anyway and has no objective gate, review neither.
func TestPinWarningsOnlyForTheCycleShape(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"objective: x\n", []string{"no objective_verify checks", "no verify checks"}},
		{"objective: x\nverify: [\"true\"]\n", []string{"no objective_verify checks"}},
		{"objective: x\nobjective_verify: [\"true\"]\n", []string{"no verify checks"}},
		{"objective: x\nverify: [\"true\"]\nobjective_verify: [\"true\"]\n", nil},
		{"shape: ralph\nobjective: x\nverify: [\"true\"]\n", nil},
		{"shape: review\n", nil},
	} {
		l, err := Parse([]byte(c.src), "loop.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		w := l.Warnings()
		if len(w) != len(c.want) {
			t.Errorf("%q: warnings %q, want %d (%q)", c.src, w, len(c.want), c.want)
			continue
		}
		for i := range w {
			if !strings.HasPrefix(w[i], c.want[i]) {
				t.Errorf("%q: warning %d %q, want it to start %q", c.src, i, w[i], c.want[i])
			}
		}
	}
}

// Diff shows MaxLines lines in full; one more, and the last line counts
// the ones left out.
func TestPinDiffCapAtMaxLines(t *testing.T) {
	diff := func(n int) []string {
		a, b := &Loop{}, &Loop{}
		for i := 0; i < n; i++ {
			b.Verify = append(b.Verify, fmt.Sprintf("check %d", i))
		}
		return Diff(a, b)
	}
	if got := diff(MaxLines); len(got) != MaxLines || strings.HasPrefix(got[MaxLines-1], "…") {
		t.Errorf("%d changes: %d lines, the last %q; want all of them", MaxLines, len(got), got[len(got)-1])
	}
	got := diff(MaxLines + 1)
	if len(got) != MaxLines || got[MaxLines-1] != "… and 2 more" {
		t.Errorf("%d changes: %d lines, the last %q; want %d, the last \"… and 2 more\"", MaxLines+1, len(got), got[len(got)-1], MaxLines)
	}
}

// A secret-named variable is masked in the diff, under agent.env and
// under a phase's agents.*.env alike; another variable is shown.
func TestPinDiffMasksSecretEnv(t *testing.T) {
	a, b := &Loop{}, &Loop{}
	b.Agent.Env = map[string]string{"API_TOKEN": "s3cret-1", "MODE": "fast"}
	b.Agents = map[string]Agent{"build": {Env: map[string]string{"API_TOKEN": "s3cret-2", "MODE": "slow"}}}
	got := Diff(a, b)
	want := []string{
		"agent.env.API_TOKEN: none → [REDACTED:API_TOKEN]",
		`agent.env.MODE: none → "fast"`,
		"agents.build.env.API_TOKEN: none → [REDACTED:API_TOKEN]",
		`agents.build.env.MODE: none → "slow"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// capLines never writes into the list it was given: the "… and N more"
// line goes into a new array, not over the caller's line MaxLines.
func TestPinCapLinesLeavesItsInputAlone(t *testing.T) {
	in := make([]string, MaxLines+1)
	for i := range in {
		in[i] = fmt.Sprint(i)
	}
	out := capLines(in)
	if in[MaxLines-1] != fmt.Sprint(MaxLines-1) {
		t.Errorf("the caller's line %d became %q", MaxLines-1, in[MaxLines-1])
	}
	if len(out) != MaxLines || out[MaxLines-1] != "… and 2 more" {
		t.Errorf("%d lines, the last %q", len(out), out[len(out)-1])
	}
}
