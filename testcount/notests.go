package testcount

import (
	"bytes"
	"regexp"
)

// What a runner prints when it ran no test and exits 0: these lines count
// as a reading of zero tests (Counts.NoTests), never as tests that ran.
var (
	// go test: "?   \tpkg\t[no test files]"
	goNoTestFiles = regexp.MustCompile(`^\?\s+\S+\s+\[no test files\]$`)
	// jest --passWithNoTests: "No tests found, exiting with code 0";
	// vitest --passWithNoTests: "No test files found, exiting with code 0".
	jsNoneFound = regexp.MustCompile(`^No (tests|test files) found, exiting with code 0$`)
	// TAP's plan of no test: "1..0" (node --test's TAP reporter with none).
	tapEmptyPlan = regexp.MustCompile(`^\s*1\.\.0(?:\s*#.*)?$`)
)

// noTestsLine reads a line that says a runner ran no test; it claims the
// line when it does.
func (p *Parser) noTestsLine(b []byte) bool {
	switch b[0] {
	case '?':
		if goNoTestFiles.Match(b) {
			p.goPkgSeen = true
			p.goNoTests++
			return true
		}
	case 'N':
		if m := jsNoneFound.FindSubmatch(b); m != nil {
			if string(m[1]) == "tests" {
				p.jest.seen = true
			} else {
				p.vitest.set(tally{})
			}
			return true
		}
	case ' ', '\t', '1':
		if tapEmptyPlan.Match(b) {
			p.tap.seen = true
		}
	}
	return false
}

// goPkgResult counts a go test package result line: "ok … [no tests to
// run]" ran none, any other ran tests (or failed).
func (p *Parser) goPkgResult(line []byte) {
	if bytes.HasPrefix(line, []byte("ok")) && bytes.HasSuffix(line, []byte("[no tests to run]")) {
		p.goNoTests++
		return
	}
	p.goRan++
}

// noTests says the output read proves that no test ran: what was
// recognised counts no test that passed or failed (skipped and deselected
// tests did not run), and every go test package printed that it has no
// test files or no tests to run.
func (p *Parser) noTests(c Counts) bool {
	if !c.Known && p.goNoTests == 0 {
		return false // nothing readable
	}
	return c.Passed == 0 && c.Failed == 0 && p.goRan == 0
}

// goJSONPackage counts a go test -json package's end: "skip" (no test
// files) ran none, "pass" or "fail" ran tests (a pass with no tests to run
// counts as one that ran: its output line is not read here).
func (p *Parser) goJSONPackage(b []byte) {
	if !bytes.Contains(b, []byte(`"Package":`)) {
		return
	}
	switch {
	case bytes.Contains(b, []byte(`"Action":"skip"`)):
		p.goNoTests++
	case bytes.Contains(b, []byte(`"Action":"pass"`)), bytes.Contains(b, []byte(`"Action":"fail"`)):
		p.goRan++
	}
}
