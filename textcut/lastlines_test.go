package textcut

import (
	"strings"
	"testing"
)

// The last n lines, trimmed, and no more than 500 bytes of them.
func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\nd\n", 3, "b\nc\nd"},
		{"a\nb", 3, "a\nb"},
		{"\n  a\nb  \n", 1, "b"},
		{"", 3, ""},
	} {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := LastLines(strings.Repeat("x", 600), 3); got != strings.Repeat("x", 500)+"…" {
		t.Errorf("LastLines of 600 bytes: %d bytes", len(got))
	}
	if got := LastLines(strings.Repeat("x", 500), 3); got != strings.Repeat("x", 500) {
		t.Errorf("LastLines of 500 bytes cut: %d bytes", len(got))
	}
}
