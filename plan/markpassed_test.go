package plan

import (
	"strings"
	"testing"
)

// MarkPassed sets each task's passes and keeps every other field, even one
// the Plan type does not know; a plan of another size, or not a plan, is
// refused.
func TestMarkPassed(t *testing.T) {
	data := []byte(`{"tasks": [{"id": "T-001", "passes": false, "extra": 7}, {"id": "T-002"}], "note": "kept"}`)
	out, ok := MarkPassed(data, []bool{true, false})
	if !ok {
		t.Fatal("refused a plan of two tasks")
	}
	got := string(out)
	for _, want := range []string{`"passes": true`, `"passes": false`, `"extra": 7`, `"note": "kept"`, "\n  \"tasks\""} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing from\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "}\n") {
		t.Errorf("no final newline: %q", got)
	}
	for _, bad := range []string{`{"tasks": [{"id": "T-001"}]}`, `{"tasks": "x"}`, `{"tasks": [1, 2]}`, `[]`, `not json`} {
		if _, ok := MarkPassed([]byte(bad), []bool{true, false}); ok {
			t.Errorf("accepted %s", bad)
		}
	}
}
