// Package termtext makes untrusted text safe to print on a terminal.
//
// Plan titles, agent messages, check output and record fields are written by
// agents and programs the loop does not trust. Printed raw, an escape
// sequence in them can retitle the window, clear the screen, move the cursor
// over earlier lines or hide text. Every command that prints such text to a
// terminal (status, logs, watch, the run's console and report) passes it
// through Clean.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clean returns s with every control character shown as a visible escape
// (ESC as \x1b, CR as \r, DEL as \x7f, C1 controls as \u009b …), invalid
// UTF-8 as U+FFFD, and the Unicode controls that reorder or hide text (bidi
// overrides and isolates) escaped too. Newlines and tabs are kept. Text
// without any of these is returned as it is, without allocating.
func Clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Line is Clean for a one-line place: line breaks become spaces as well.
func Line(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ").Replace(Clean(strings.ReplaceAll(s, "\r\n", "\n")))
}

func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			// Multi-byte: check the slow way from here on.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) || (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
					return true
				}
			}
			return !utf8.ValidString(s[i:])
		}
	}
	return false
}

// unsafeRune: C1 controls, and the bidi/format controls that reorder or
// hide text.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
