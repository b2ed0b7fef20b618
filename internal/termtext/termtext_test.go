package termtext

import (
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	cases := map[string]string{
		"plain title":           "plain title",
		"two\nlines\tand a tab": "two\nlines\tand a tab",
		"\x1b]0;pwned\x07title": `\x1b]0;pwned\x07title`,
		"\x1b[2J\x1b[Hclear":    `\x1b[2J\x1b[Hclear`,
		"over\rwrite":           `over\rwrite`,
		"del\x7f":               `del\x7f`,
		"c1 \u009b31m csi":      `c1 \u009b31m csi`,
		"bidi \u202egnp.exe":    `bidi \u202egnp.exe`,
		"bad \xff utf8":         "bad \uFFFD utf8",
		"héllo — ✓":             "héllo — ✓",
	}
	for in, want := range cases {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(Clean(in), "\x1b\x07\r\u009b\u202e") {
			t.Errorf("Clean(%q) kept a control character", in)
		}
	}
	if got := Line("a\nb\r\nc\x1b"); got != `a b c\x1b` {
		t.Errorf("Line: %q", got)
	}
}

func FuzzClean(f *testing.F) {
	f.Add("\x1b]0;x\x07")
	f.Add("ok")
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Clean(%q) = %q keeps %U", s, out, r)
			}
		}
	})
}
