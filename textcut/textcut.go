// Package textcut holds the short forms of text the engine's rooms print
// into records, reports and prompts: a string cut to a length, a value's
// short form, the last line of an output, a commit's short name. One copy,
// imported by the engine and the review shape alike.
package textcut

import (
	"fmt"
	"strings"
)

// Cut keeps s to n bytes, marked with "…" when cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Short is v printed and cut to 80 bytes.
func Short(v any) string { return Cut(fmt.Sprint(v), 80) }

// LastLine is the last line of s, trimmed and cut to 200 bytes: what an
// error's output most often ends with.
func LastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return Cut(s, 200)
}

// SHA is a commit's name cut to its first 10 characters.
func SHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// LastLines are the last n lines of s, trimmed, cut to 500 bytes: an
// agent's final message in its agent_end record.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return Cut(strings.Join(lines, "\n"), 500)
}

// Plural is n of what, as the records say it: "1 build run", "2 build
// runs", "3 processes".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
