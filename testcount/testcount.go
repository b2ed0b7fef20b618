// Package testcount reads the output of test runners and returns how many
// tests passed, failed and were skipped, with their names where the output
// names them. It serves the gate rule "the passing count never drops": a gate
// whose passed count falls below the baseline's, or whose skipped count
// rises, fails.
//
// Recognised runners: go test -v, go test -json, pytest, python -m unittest,
// jest, vitest, mocha (spec and TAP reporters), node --test (TAP and spec
// reporters), cargo test and any TAP producer, plus patterns the user adds for other runners (Pattern).
//
// Parser.Failures names the failing tests with the lines that say why they
// failed, for a check's failure signal.
//
// Output is read as a stream in bounded memory: lines are cut at MaxLine
// bytes and the names kept are capped at MaxNameBytes per list.
package testcount

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

const (
	// MaxLine is the longest line read whole; the rest of a longer line is
	// dropped (no summary line is that long).
	MaxLine = 1 << 20
	// MaxNameLen is the longest test name kept; longer names are cut.
	MaxNameLen = 512
	// MaxNameBytes caps the bytes of names kept in each of PassedNames and
	// SkippedNames; past it the list is incomplete and NamesTruncated is set.
	MaxNameBytes = 2 << 20
)

// Counts is what the output says about the tests that ran.
type Counts struct {
	// Runner names the runners recognised, comma-separated in a fixed
	// order: "go", "go-json", "pytest", "unittest", "jest", "vitest",
	// "mocha", "node", "cargo", "tap", then the user patterns' names.
	Runner  string `json:"runner,omitempty"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// PassedNames and SkippedNames are sorted and free of duplicates; they
	// are filled only when the output names tests (go test -v or -json,
	// pytest -v or -rA, unittest -v, cargo test, TAP, jest --verbose,
	// vitest --reporter=verbose).
	PassedNames  []string `json:"passed_names,omitempty"`
	SkippedNames []string `json:"skipped_names,omitempty"`
	// NamesTruncated says a names list hit MaxNameBytes and is incomplete.
	NamesTruncated bool `json:"names_truncated,omitempty"`
	// Known is false when nothing was recognised: the counts mean nothing.
	Known bool `json:"known"`
	// NoTests says the output proves that no test ran: the runners
	// recognised count none that passed or failed, only skipped ones if any
	// (pytest's "no tests ran" or "3 deselected", cargo's "running 0
	// tests" for every binary, node's "pass 0", TAP's "1..0", jest's and
	// vitest's "No tests found, exiting with code 0"), and every go test
	// package printed "[no test files]" or "[no tests to run]" (with
	// -json: its package's "skip"). Known may be false then (go test
	// without -v).
	NoTests bool `json:"no_tests,omitempty"`
	// Unreadable says why the counts cannot be read when Known is false,
	// for the caller's warning (the passing-count rule is off for a check
	// whose counts cannot be read).
	Unreadable string `json:"unreadable,omitempty"`
}

// String is a one-line summary such as "pytest: 3 passed, 1 failed, 2 skipped".
func (c Counts) String() string {
	if !c.Known {
		return "no test counts recognised"
	}
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped", c.Runner, c.Passed, c.Failed, c.Skipped)
}

// Parse reads a check's combined output to the end and returns the counts of
// every recognised runner, summed. The error is an invalid pattern in extra
// (nothing is read then) or the reader's error (the counts read so far are
// returned with it, and are probably short).
func Parse(r io.Reader, extra []Pattern) (Counts, error) {
	p, err := NewParser(extra)
	if err != nil {
		return Counts{}, err
	}
	buf := make([]byte, 64<<10)
	_, err = io.CopyBuffer(p, r, buf)
	return p.Counts(), err
}

// ParseString is Parse on a string, for tests and small outputs.
func ParseString(s string, extra []Pattern) (Counts, error) {
	return Parse(strings.NewReader(s), extra)
}

// tally is one runner's counts.
type tally struct {
	passed, failed, skipped int
	seen                    bool
}

func (t *tally) add(o tally) {
	if !o.seen {
		return
	}
	t.passed += o.passed
	t.failed += o.failed
	t.skipped += o.skipped
	t.seen = true
}

// session holds a runner whose summary line is authoritative for a session
// that starts with a marker line (pytest's "test session starts", cargo's
// "running N tests", vitest's "RUN v..."): within a session the last summary
// wins, so a test that prints a fake summary line before the real one does
// not count.
type session struct {
	done, pending tally
}

func (s *session) set(t tally) { t.seen = true; s.pending = t }
func (s *session) commit()     { s.done.add(s.pending); s.pending = tally{} }

// Parser reads output written to it (it is an io.Writer) line by line. Feed
// it everything, then call Counts. A Parser is not safe for concurrent use.
type Parser struct {
	extra []compiled

	partial   []byte // the start of a line not yet ended
	dropping  bool   // the current line passed MaxLine; drop until '\n'
	clean     []byte // scratch for ANSI stripping
	finalized bool

	goV, goJSON, unittest, jest, node, tap tally
	pytest, cargo, vitest, mocha           session
	mochaOpen                              bool // mocha's summary is being read
	goPkgSeen                              bool // a go test package result line was seen
	goNoTests, goRan                       int  // go test packages that ran no test, and the others
	tapSeen                                bool // a TAP version, plan or bail-out line was seen
	goVerbose                              bool // go test -v's "=== RUN" was seen
	inCaptured                             bool // inside pytest's "Captured stdout call" section
	pytestCand                             tally
	pytestCandSet                          bool
	pytestHeaded                           bool // the pytest session began with its header

	passed, skipped nameSet

	// go test -v: names wait for their package's "ok"/"FAIL" line.
	goPending []pendingName

	// unittest -v: a test with a docstring prints its result on the next line.
	utName string
	// unittest: "Ran N tests" waits for its "OK"/"FAILED (...)" line.
	utRan    int
	utRanSet bool

	// jest --verbose: the file and describe blocks above a test line.
	jestFile     string
	jestDescribe []indented
	// jest: the previous non-blank line started with "Test Suites:".
	jestSuites bool

	// cargo: the test binary now running, to qualify names.
	cargoBin string

	// TAP: subtests above the current test point; inside a YAML block.
	tapStack []indented
	tapYAML  int  // indentation of the open YAML block, or -1
	tapLast  bool // the previous non-blank line was a TAP test point
	// TAP: names of test points seen before the output proved to be TAP.
	tapPending []pendingName

	// The failing tests and their messages (Failures).
	fails fails
}

type pendingName struct {
	name    string
	skipped bool
}

type indented struct {
	indent int
	name   string
}

// NewParser returns a Parser that also counts with the user's patterns.
func NewParser(extra []Pattern) (*Parser, error) {
	p := &Parser{tapYAML: -1}
	p.fails.init()
	for i, pat := range extra {
		c, err := pat.compile()
		if err != nil {
			return nil, fmt.Errorf("test summary pattern %d (%q): %w", i+1, pat.Name, err)
		}
		p.extra = append(p.extra, c)
	}
	return p, nil
}

// Write feeds output to the parser; it never fails.
func (p *Parser) Write(b []byte) (int, error) {
	n := len(b)
	if p.finalized {
		return n, nil
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.keep(b)
			break
		}
		if p.dropping {
			p.dropping = false
			p.partial = p.partial[:0]
		} else if len(p.partial) > 0 {
			p.keep(b[:i])
			if !p.dropping {
				p.Line(p.partial)
			}
			p.dropping = false
			p.partial = p.partial[:0]
		} else {
			p.Line(b[:i])
		}
		b = b[i+1:]
	}
	return n, nil
}

// keep appends to the partial line, up to MaxLine; past it the line is read
// as its first MaxLine bytes and the rest is dropped.
func (p *Parser) keep(b []byte) {
	if p.dropping {
		return
	}
	room := MaxLine - len(p.partial)
	if len(b) > room {
		p.partial = append(p.partial, b[:room]...)
		p.Line(p.partial)
		p.partial = p.partial[:0]
		p.dropping = true
		return
	}
	p.partial = append(p.partial, b...)
}

// Line reads one line of output without its newline. Callers that already
// split the output into lines (a bufio.Scanner) may call it instead of
// Write; do not mix the two. b is not kept.
func (p *Parser) Line(b []byte) {
	if p.finalized {
		return
	}
	if len(b) > MaxLine {
		b = b[:MaxLine]
	}
	b = p.cleanLine(b)
	p.builtin(b)
	for i := range p.extra {
		p.extra[i].line(b)
	}
	p.failLine(b)
}

// Counts ends the stream (a last line without a newline is read) and
// returns the sums. Calling it again returns the same; Write and Line do
// nothing after it.
func (p *Parser) Counts() Counts {
	if !p.finalized {
		if len(p.partial) > 0 && !p.dropping {
			p.Line(p.partial)
		}
		p.partial = nil
		p.flushGo("")
		p.pytestEnd()
		p.cargo.commit()
		p.vitest.commit()
		p.mocha.commit()
		p.finalized = true
	}
	var c Counts
	var runners []string
	add := func(name string, t tally) {
		if !t.seen {
			return
		}
		runners = append(runners, name)
		c.Passed += t.passed
		c.Failed += t.failed
		c.Skipped += t.skipped
	}
	if p.goVerbose {
		// Without -v, go test prints "--- FAIL" lines but no passes.
		add("go", p.goV)
	}
	add("go-json", p.goJSON)
	add("pytest", p.pytest.done)
	add("unittest", p.unittest)
	add("jest", p.jest)
	add("vitest", p.vitest.done)
	add("mocha", p.mocha.done)
	add("node", p.node)
	add("cargo", p.cargo.done)
	if p.tapSeen {
		add("tap", p.tap)
	}
	for i := range p.extra {
		add(p.extra[i].name, p.extra[i].tally())
	}
	c.Known = len(runners) > 0
	c.Runner = strings.Join(runners, ",")
	if !c.Known {
		c.Unreadable = "no test runner's results were recognised in the output"
		if p.goPkgSeen {
			c.Unreadable = "go test printed its packages' results but no line per test: run it with -v (or -json)"
		}
	}
	c.NoTests = p.noTests(c)
	c.PassedNames = p.passed.sorted()
	c.SkippedNames = p.skipped.sorted()
	c.NamesTruncated = p.passed.truncated || p.skipped.truncated
	return c
}

// nameSet keeps distinct names up to MaxNameBytes.
type nameSet struct {
	m         map[string]struct{}
	bytes     int
	truncated bool
}

func (s *nameSet) add(name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		return
	}
	if len(name) > MaxNameLen {
		name = strings.ToValidUTF8(name[:MaxNameLen], "") + "…"
	}
	if _, ok := s.m[name]; ok {
		return
	}
	if s.bytes+len(name) > MaxNameBytes {
		s.truncated = true
		return
	}
	if s.m == nil {
		s.m = map[string]struct{}{}
	}
	s.m[name] = struct{}{}
	s.bytes += len(name)
}

func (s *nameSet) sorted() []string {
	if len(s.m) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.m))
	for n := range s.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// cleanLine drops ANSI escape sequences, a trailing carriage return and
// trailing blanks, and keeps only what follows the last carriage return
// (what a terminal would show). The result may alias b or p.clean.
func (p *Parser) cleanLine(b []byte) []byte {
	b = bytes.TrimRight(b, " \t\r")
	if i := bytes.LastIndexByte(b, '\r'); i >= 0 {
		b = b[i+1:]
	}
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	p.clean = stripANSI(p.clean[:0], b)
	return bytes.TrimRight(p.clean, " \t")
}

// stripANSI appends b without its escape sequences to dst: CSI (ESC [ ...
// final byte), OSC (ESC ] ... BEL or ESC \) and two-byte escapes.
func stripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != 0x1b {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j // the final byte, or past the end
		case ']':
			j := i + 2
			for j < len(b) {
				if b[j] == 0x07 {
					break
				}
				if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
					j++
					break
				}
				j++
			}
			i = j
		default: // ESC, intermediate bytes, a final byte: "ESC ( B"
			j := i + 1
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
				j++
			}
			i = j
		}
	}
	return dst
}

// indentOf counts leading spaces and tabs (a tab counts as 4).
func indentOf(b []byte) int {
	n := 0
	for _, c := range b {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}
