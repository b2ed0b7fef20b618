package review

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

func TestParseFindingsValid(t *testing.T) {
	fs, errs := ParseFindings([]byte(`{"findings":[{"id":"F-1","severity":"Critical","file":"./a.go","line":3,"title":"t","detail":"d","kind":"race"}]}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(fs) != 1 || fs[0].Severity != "critical" || fs[0].Line != 3 || fs[0].File != "./a.go" {
		t.Fatalf("got %+v", fs)
	}
	if fs, errs := ParseFindings([]byte(`{"findings":[]}`)); len(errs) > 0 || len(fs) != 0 {
		t.Fatalf("empty findings: %v %v", fs, errs)
	}
}

func TestParseFindingsInvalid(t *testing.T) {
	cases := map[string]string{
		``:                 "no findings JSON",
		`not json`:         "not valid JSON",
		`{"issues":[]}`:    `no "findings" array`,
		`{"findings":{}}`:  `"findings" must be an array`,
		`{"findings":[1]}`: "finding 1: not an object",
		`{"findings":[{"id":"F-1","severity":"huge","file":"a","line":1,"title":"t","detail":"d","kind":"k"}]}`:                                                                        `finding 1 (F-1): "severity" must be critical, major or minor, got "huge"`,
		`{"findings":[{"id":"F-1","severity":"minor","file":"a","line":-2,"title":"t","detail":"d","kind":"k"}]}`:                                                                      `"line" must be a whole number`,
		`{"findings":[{"id":"F-1","severity":"minor","file":"a","line":"7","title":"t","detail":"d","kind":"k"}]}`:                                                                     `"line" must be a number`,
		`{"findings":[{"id":"F-1","severity":"minor","file":"","title":"t","detail":"d","kind":"k"}]}`:                                                                                 `"file" must be a non-empty string`,
		`{"findings":[{"id":"F-1","severity":"minor","file":"a","title":"t","detail":"d"}]}`:                                                                                           `finding 1 (F-1): "kind" must be a non-empty string`,
		`{"findings":[{"severity":"minor","file":"a","title":"t","detail":"d","kind":"k"}]}`:                                                                                           `finding 1: "id" must be a non-empty string`,
		`{"findings":[{"id":"F-1","severity":"minor","file":"a","title":"t","detail":"d","kind":"k"},{"id":"F-1","severity":"minor","file":"a","title":"t","detail":"d","kind":"k"}]}`: "the id appears twice",
	}
	for in, want := range cases {
		_, errs := ParseFindings([]byte(in))
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("%s: errors %q do not say %q", in, errs, want)
		}
	}
}

func TestExtractJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"findings":[]}`: `{"findings":[]}`,
		"Here you are:\n```json\n{\"findings\":[{\"id\":\"x\"}]}\n```\n": `{"findings":[{"id":"x"}]}`,
		"I found these {\"findings\": []} and stopped.":                  `{"findings": []}`,
	} {
		if got := string(extractJSON(in)); got != want {
			t.Errorf("extractJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseVerdicts(t *testing.T) {
	fs := []Finding{{ID: "F-1"}, {ID: "F-2"}}
	v, errs := ParseVerdicts([]byte(`{"verdicts":[{"id":"F-1","status":"Closed","detail":"x"},{"id":"F-2","status":"open","detail":"y"}]}`), fs)
	if len(errs) > 0 || len(v) != 2 || v[0].Status != "closed" {
		t.Fatalf("%v %v", v, errs)
	}
	_, errs = ParseVerdicts([]byte(`{"verdicts":[{"id":"F-1","status":"maybe"},{"id":"F-9","status":"open"}]}`), fs)
	all := strings.Join(errs, "\n")
	for _, want := range []string{`"status" must be closed or open`, `"F-9" is not one of the findings`, "F-2 has no verdict"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors %q do not say %q", errs, want)
		}
	}
}

func TestRecurrence(t *testing.T) {
	r1 := Round{N: 1, Sent: []string{"F-1"}, Findings: []Finding{
		{ID: "F-1", Severity: "critical", File: "hook.sh", Line: 10, Kind: "bypass", Title: "--force"},
		{ID: "F-2", Severity: "minor", File: "hook.sh", Line: 10, Kind: "style", Title: "naming"}, // not sent
	}}
	now := []Finding{
		{ID: "A", Severity: "critical", File: "./hook.sh", Line: 30, Kind: "Bypass", Title: "+refspec"}, // same kind, 20 lines away
		{ID: "B", Severity: "major", File: "hook.sh", Line: 80, Kind: "bypass", Title: "far away"},      // too far
		{ID: "C", Severity: "major", File: "other.sh", Line: 10, Kind: "bypass", Title: "other file"},
		{ID: "D", Severity: "major", File: "hook.sh", Line: 10, Kind: "style", Title: "naming"}, // F-2 was never sent
		{ID: "E", Severity: "minor", File: "hook.sh", Line: 10, Kind: "bypass", Title: "below bar"},
	}
	rec := findRecurrences([]Round{r1}, now, "major")
	if len(rec) != 1 || rec[0].ID != "A" || rec[0].Of != "F-1" || rec[0].Round != 1 {
		t.Fatalf("recurrences %+v, want only A of round 1 F-1", rec)
	}
}

func TestSameSet(t *testing.T) {
	a := []Finding{{ID: "F-1", Severity: "major", File: "a.go", Line: 1, Kind: "bug", Title: "The value is wrong."}}
	b := []Finding{{ID: "F-9", Severity: "major", File: "./a.go", Line: 7, Kind: "Bug", Title: "the value is wrong"}}
	if !sameSet(a, b) {
		t.Error("the same finding with another id and line is the same set")
	}
	c := []Finding{{ID: "F-1", Severity: "major", File: "a.go", Kind: "bug", Title: "the value is wrong in a new way"}}
	if sameSet(a, c) {
		t.Error("a new form is not the same set")
	}
	if sameSet(a, append(b, c...)) || sameSet(nil, nil) {
		t.Error("more findings, or none, is not the same set")
	}
}

func TestReviewerDefaultsToAnotherModel(t *testing.T) {
	for _, tc := range []struct{ fixer, want string }{{"", "opus"}, {"sonnet", "opus"}, {"claude-opus-4-1", "sonnet"}} {
		l := &spec.Loop{Agent: spec.Agent{Backend: "claude", Model: tc.fixer}}
		s := New(t.TempDir(), &fakeHost{spec: l})
		rs := &State{Warned: true}
		s.reviewAgents(rs)
		if got := l.AgentFor("reviewer", false); got.Backend != "claude" || got.Model != tc.want {
			t.Errorf("fixer %q: reviewer %+v, want claude/%s", tc.fixer, got, tc.want)
		}
		if l.AgentFor("fixer", false).Model != tc.fixer {
			t.Errorf("the fixer's model changed")
		}
	}
	// A reviewer the loop file names is kept, even when it is the fixer's model.
	l := &spec.Loop{Agent: spec.Agent{Backend: "claude", Model: "sonnet"}, Agents: map[string]spec.Agent{"reviewer": {Backend: "codex", Model: "gpt-5"}}}
	New(t.TempDir(), &fakeHost{spec: l}).reviewAgents(&State{Warned: true})
	if got := l.AgentFor("reviewer", false); got.Backend != "codex" || got.Model != "gpt-5" {
		t.Errorf("reviewer %+v, want codex/gpt-5", got)
	}
	if !SameAgent(spec.Agent{Backend: "command", Command: "x"}, spec.Agent{Backend: "command", Command: "x"}) ||
		SameAgent(spec.Agent{Backend: "command", Command: "x"}, spec.Agent{Backend: "command", Command: "y"}) {
		t.Error("sameAgent")
	}
}

func TestFenceBlockCannotBeClosedByItsText(t *testing.T) {
	got := fenceBlock("diff", "a\n```\nb")
	if !strings.HasPrefix(got, "````diff\n") || !strings.HasSuffix(got, "\n````") {
		t.Fatalf("fence %q", got)
	}
}
