package judge

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/record"
)

// What status and the report say of the flaky checks and of the last
// verify_strength pass, the flaky checks noted as they are seen, and a
// gate's evidence lines.

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

// GateEvidence is a gate's evidence lines (Evidence). When the gate
// failed although every check passed in the work tree (the clean room or
// a holdout check refused it), no check is listed as a pass: the first
// line says the gate failed and why, and each check says where it passed.
func GateEvidence(gate string, rs []CheckResult, errs []string, pass bool, why string) []string {
	if pass || !AllPass(rs) || len(errs) > 0 {
		return Evidence(gate, rs, errs)
	}
	if why == "" {
		why = "the done verdict refused it"
	}
	out := []string{fmt.Sprintf("%s gate: FAIL: %s", gate, why)}
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s gate: `%s` exit %d in the agent's work tree only, not a pass: the gate FAILED (%dms)", gate, r.Command, r.ExitCode, r.DurationMS))
	}
	return out
}
