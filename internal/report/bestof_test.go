package report

import (
	"strings"
	"testing"
)

// A kept attempt of a best-of is a line of the loop's report; attempts
// not kept are not (they are on their refs and in the records).
func TestReportBestOfLine(t *testing.T) {
	msg := "T-002 attempt 2 of 3 (claude/opus): passed, kept; 12 lines in 2 files; on refs/looprinter/demo/best-of/T-002/7-2"
	if got := bestOfLine("kept", msg); got != msg {
		t.Errorf("kept: %q", got)
	}
	for _, kind := range []string{"passed", "failed", ""} {
		if got := bestOfLine(kind, msg); got != "" {
			t.Errorf("%s: %q", kind, got)
		}
	}
	r := &Report{Loops: []Loop{{Name: "demo", Title: "DONE", BestOf: []string{msg}}}}
	if text := r.Text(); !strings.Contains(text, "  best of:    "+msg+"\n") {
		t.Errorf("the text report:\n%s", text)
	}
	if md := r.Markdown(); !strings.Contains(md, "- **best of:** "+msg) {
		t.Errorf("the markdown report:\n%s", md)
	}
}
