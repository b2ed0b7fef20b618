package review

// Tests that pin the reviewer-output and recurrence decisions (issue 18).

import (
	"testing"
)

// Two findings recur exactly at the window's edge (RecurWindow lines
// apart, either way) and not one line beyond it.
func TestPinRecurrenceWindowEdges(t *testing.T) {
	sent := Finding{ID: "F-1", Severity: "major", File: "a.go", Line: 100, Kind: "race", Title: "t"}
	earlier := []Round{{N: 1, Sent: []string{"F-1"}, Findings: []Finding{sent}}}
	for _, c := range []struct {
		line int
		want bool
	}{
		{100 + RecurWindow, true},
		{100 - RecurWindow, true},
		{100 + RecurWindow + 1, false},
		{100 - RecurWindow - 1, false},
		{0, true}, // the file as a whole
	} {
		now := []Finding{{ID: "A", Severity: "major", File: "a.go", Line: c.line, Kind: "race", Title: "u"}}
		got := len(findRecurrences(earlier, now, "major")) == 1
		if got != c.want {
			t.Errorf("line %d against line 100 (window %d): recurs %v, want %v", c.line, RecurWindow, got, c.want)
		}
	}
	if RecurWindow != 30 {
		t.Errorf("RecurWindow %d: the documented window is 30 lines", RecurWindow)
	}
}

// Reviewer output shapes: with two fenced blocks the last one is the
// answer (a reviewer quotes, then answers); JSON followed by prose is
// still found; each parses to the findings it holds.
func TestPinReviewerOutputShapes(t *testing.T) {
	f1 := `{"findings":[{"id":"F-1","severity":"major","file":"a.go","line":1,"title":"first","detail":"d","kind":"k"}]}`
	f2 := `{"findings":[{"id":"F-2","severity":"minor","file":"b.go","line":2,"title":"second","detail":"d","kind":"k"}]}`
	for _, c := range []struct {
		name, in, wantJSON, wantID string
	}{
		{"two fenced blocks", "The schema:\n```json\n" + f1 + "\n```\nMy answer:\n```json\n" + f2 + "\n```\n", f2, "F-2"},
		{"two fences, the last untagged", "```json\n" + f1 + "\n```\nthen\n```\n" + f2 + "\n```", f2, "F-2"},
		{"prose after the JSON", f1 + "\nThat is all I found; the rest looks fine.", f1, "F-1"},
		{"prose on both sides", "Findings: " + f2 + " (end)", f2, "F-2"},
	} {
		got := string(extractJSON(c.in))
		if got != c.wantJSON {
			t.Errorf("%s: extractJSON = %q, want %q", c.name, got, c.wantJSON)
			continue
		}
		fs, errs := ParseFindings([]byte(got))
		if len(errs) > 0 || len(fs) != 1 || fs[0].ID != c.wantID {
			t.Errorf("%s: findings %+v, errors %v; want only %s", c.name, fs, errs, c.wantID)
		}
	}
}
