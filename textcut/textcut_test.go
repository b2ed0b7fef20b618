package textcut

import (
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"", 0, ""},
		{"a", 0, "…"},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestShort(t *testing.T) {
	if got := Short(42); got != "42" {
		t.Errorf("Short(42) = %q", got)
	}
	long := strings.Repeat("x", 81)
	if got := Short(long); got != strings.Repeat("x", 80)+"…" {
		t.Errorf("Short of 81 bytes = %q", got)
	}
	if got := Short(strings.Repeat("y", 80)); got != strings.Repeat("y", 80) {
		t.Errorf("Short of 80 bytes was cut: %q", got)
	}
}

func TestLastLine(t *testing.T) {
	if got := LastLine("  first\nsecond\nthird \n\n"); got != "third" {
		t.Errorf("LastLine = %q", got)
	}
	if got := LastLine("only"); got != "only" {
		t.Errorf("LastLine of one line = %q", got)
	}
	if got := LastLine(strings.Repeat("z", 201)); got != strings.Repeat("z", 200)+"…" {
		t.Errorf("LastLine not cut at 200: %d bytes", len(got))
	}
}

func TestSHA(t *testing.T) {
	if got := SHA("0123456789abcdef"); got != "0123456789" {
		t.Errorf("SHA = %q", got)
	}
	if got := SHA("abc"); got != "abc" {
		t.Errorf("SHA of a short name = %q", got)
	}
}
