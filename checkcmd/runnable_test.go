package checkcmd

import (
	"strings"
	"testing"
)

// A negated check whose program is missing passes without judging
// anything: NegatedCannotRun names it; found programs, builtins and
// commands outside the negation are left alone.
func TestNegatedCannotRun(t *testing.T) {
	dir := t.TempDir()
	path := "/usr/bin:/bin"
	for _, c := range []struct {
		line, prog string
	}{
		{"! nosuchgrep -q TODO a.txt", "nosuchgrep"},
		{"! grep -q TODO a.txt", ""},
		{"! cat a.txt | nosuchfilter", "nosuchfilter"},
		{"nosuchprog; ! grep -q x a.txt", ""},
		{"! ./lint.sh", "./lint.sh"},
		{"! test -f a.txt", ""},
		{"grep -q x a.txt && ! nosuch x", "nosuch"},
		{"! grep x a.txt; nosuch", ""},
		{"! $TOOL x", ""},
	} {
		prog, why := NegatedCannotRun(c.line, dir, path)
		if prog != c.prog || (c.prog != "" && !strings.Contains(why, "turns its failure into a pass")) {
			t.Errorf("%q: %q %q, want %q", c.line, prog, why, c.prog)
		}
	}
}
