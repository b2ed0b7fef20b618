package testcount

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// Pattern reads the summary line of a runner the parser does not know. Each
// field is a regular expression (Go RE2 syntax) with exactly one capture
// group that captures a number; every line that matches adds that number to
// the count. Name is what Counts.Runner calls it. At least one of Passed and
// Total is needed; Total (tests run) is used only when Passed is empty, and
// then passed = total - failed - skipped.
//
// Example, mocha's default reporter ("  12 passing (30ms)", "  2 pending",
// "  1 failing"):
//
//	Pattern{Name: "mocha", Passed: `^\s*(\d+) passing`, Failed: `^\s*(\d+) failing`, Skipped: `^\s*(\d+) pending`}
type Pattern struct {
	Name    string `yaml:"name" json:"name"`
	Passed  string `yaml:"passed,omitempty" json:"passed,omitempty"`
	Failed  string `yaml:"failed,omitempty" json:"failed,omitempty"`
	Skipped string `yaml:"skipped,omitempty" json:"skipped,omitempty"`
	Total   string `yaml:"total,omitempty" json:"total,omitempty"`
}

// Validate says what is wrong with the pattern, naming the field.
func (p Pattern) Validate() error {
	_, err := p.compile()
	return err
}

type compiled struct {
	name                           string
	passed, failed, skipped, total *regexp.Regexp
	sums                           [4]int // passed, failed, skipped, total
	seen                           bool
}

var builtinNames = map[string]bool{"go": true, "go-json": true, "pytest": true, "unittest": true,
	"jest": true, "vitest": true, "node": true, "cargo": true, "tap": true}

func (p Pattern) compile() (compiled, error) {
	c := compiled{name: p.Name}
	if p.Name == "" {
		return c, errors.New("name: empty")
	}
	if builtinNames[p.Name] {
		return c, fmt.Errorf("name: %q is a built-in runner's name", p.Name)
	}
	if p.Passed == "" && p.Total == "" {
		return c, errors.New("passed: empty, and no total either: give one of them")
	}
	for _, f := range []struct {
		field, expr string
		re          **regexp.Regexp
	}{
		{"passed", p.Passed, &c.passed},
		{"failed", p.Failed, &c.failed},
		{"skipped", p.Skipped, &c.skipped},
		{"total", p.Total, &c.total},
	} {
		if f.expr == "" {
			continue
		}
		re, err := regexp.Compile(f.expr)
		if err != nil {
			return c, fmt.Errorf("%s: %w", f.field, err)
		}
		if re.NumSubexp() != 1 {
			return c, fmt.Errorf("%s: %q has %d capture groups, want exactly one around the number (write (?:...) for other groups)", f.field, f.expr, re.NumSubexp())
		}
		*f.re = re
	}
	return c, nil
}

// line adds what each of the pattern's expressions finds in one line.
func (c *compiled) line(b []byte) {
	for i, re := range []*regexp.Regexp{c.passed, c.failed, c.skipped, c.total} {
		if re == nil {
			continue
		}
		m := re.FindSubmatch(b)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(string(m[1]))
		if err != nil || n < 0 {
			continue
		}
		c.sums[i] += n
		c.seen = true
	}
}

func (c *compiled) tally() tally {
	t := tally{passed: c.sums[0], failed: c.sums[1], skipped: c.sums[2], seen: c.seen}
	if c.passed == nil {
		t.passed = max(0, c.sums[3]-c.sums[1]-c.sums[2])
	}
	return t
}
