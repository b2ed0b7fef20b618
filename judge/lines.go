package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/record"
)

// What status and the report say of the flaky checks and of the last
// verify_strength pass, and the flaky checks noted as they are seen.

// NoteFlaky keeps cmd seen flaky in f, with the tests that flipped (each
// once, sorted), and returns f (made when nil).
func NoteFlaky(f FlakyTests, cmd string, tests []string) FlakyTests {
	if f == nil {
		f = FlakyTests{}
	}
	have := f[cmd]
	for _, t := range tests {
		if !slices.Contains(have, t) {
			have = append(have, t)
		}
	}
	sort.Strings(have)
	f[cmd] = have
	return f
}

// FlakyLines are the flaky checks of f, one line each, sorted.
func FlakyLines(f FlakyTests) []string {
	var out []string
	for cmd, tests := range f {
		line := "`" + cmd + "`"
		if len(tests) > 0 {
			line += " (tests that flipped: " + strings.Join(tests, ", ") + ")"
		} else {
			line += " (no test named in its output)"
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// StrengthLines are a verify_strength pass's line, then one line per
// survivor (at most most).
func StrengthLines(s *record.Strength, most int) []string {
	if s == nil {
		return nil
	}
	out := []string{record.StrengthLine(s)}
	for i, sv := range s.Survivors {
		if i == most {
			out = append(out, fmt.Sprintf("… and %d more survivors", len(s.Survivors)-most))
			break
		}
		out = append(out, "survived: "+sv.String())
	}
	return out
}

// SurvivorList names a pass's survivors on one line (at most most).
func SurvivorList(s *record.Strength, most int) string {
	var out []string
	for i, sv := range s.Survivors {
		if i == most {
			out = append(out, fmt.Sprintf("… and %d more", len(s.Survivors)-most))
			break
		}
		out = append(out, sv.String())
	}
	return strings.Join(out, "; ")
}
