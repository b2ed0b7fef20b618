package testcount

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

var (
	// go test -v: "--- PASS: TestX (0.00s)", subtests indented.
	goVLine = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (.+?) \(\d+(?:\.\d+)?s\)$`)
	// go test: a package's result line, "ok  \tpkg\t0.01s", "FAIL\tpkg [build failed]".
	goPkgLine = regexp.MustCompile(`^(ok|FAIL)\s+(\S+)\s+(?:\d+(?:\.\d+)?s|\(cached\)|\[[^\]]*\])`)

	// pytest: "==== 1 failed, 3 passed in 0.05s ====" or, with -q, without the "=".
	pytestSummary = regexp.MustCompile(`^(?:=+ )?((?:\d+ [a-z]+(?: [a-z]+)?(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \([^)]*\))?(?: =+)?$`)
	pytestStart   = regexp.MustCompile(`^=+ test session starts =+$`)
	// pytest -q's progress: ".Fsx..E    [100%]"
	pytestProgress = regexp.MustCompile(`^[.FsxXER]+(?:\s+\[\s*\d+%\])?$`)
	// pytest -v: "path::test PASSED  [ 14%]"
	pytestVerbose = regexp.MustCompile(`^(\S+::.+?) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)(?: \(.*\))?(?:\s+\[\s*\d+%\])?$`)
	// pytest -rA and xdist: "PASSED path::test", "[gw0] [ 14%] PASSED path::test"
	pytestShort = regexp.MustCompile(`^(?:\[gw\d+\] \[\s*\d+%\] )?(PASSED|FAILED|XFAIL|XPASS|ERROR) (\S+::.+?)(?: - .*)?$`)
	// pytest -rs: "SKIPPED [1] path:10: reason"
	pytestShortSkip = regexp.MustCompile(`^SKIPPED \[\d+\] (\S+:\d+)(?:: (.*))?$`)

	// unittest
	utRan     = regexp.MustCompile(`^Ran (\d+) tests? in \d+(?:\.\d+)?s$`)
	utResult  = regexp.MustCompile(`^(?:OK|FAILED)(?: \(([^)]*)\))?$`)
	utVerbose = regexp.MustCompile(`^(test\w*) \(([\w.]+)\)(?: \.\.\. (.*))?$`)
	utOutcome = regexp.MustCompile(`^(?:(.*) )?\.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$`)

	// jest: "Tests:       1 failed, 1 skipped, 3 passed, 6 total"
	jestSummary = regexp.MustCompile(`^Tests:\s+((?:\d+ [a-z]+, )*)\d+ total$`)
	jestFile    = regexp.MustCompile(`^\s*(?:PASS|FAIL)\s+(\S.*?)(?: \(\d.*\))?$`)

	// vitest: "      Tests  1 failed | 3 passed | 1 skipped (6)"
	vitestSummary = regexp.MustCompile(`^\s*Tests\s{2,}((?:\d+ [a-z]+(?: \| )?)+)\s*\(\d+\)$`)
	vitestStart   = regexp.MustCompile(`^\s*RUN\s+v\d`)

	// mocha, spec reporter (and dot, list, min …): "  3 passing (43ms)",
	// "  1 pending", "  2 failing".
	mochaPassing = regexp.MustCompile(`^\s*(\d+) passing \(\d+(?:\.\d+)?(?:ms|s|m|h)\)$`)
	mochaOther   = regexp.MustCompile(`^\s*(\d+) (pending|failing)$`)

	// node --test, spec reporter: "ℹ pass 3"
	nodeSpec = regexp.MustCompile(`^ℹ (pass|fail|cancelled|skipped|todo) (\d+)$`)

	// cargo test
	cargoRunning = regexp.MustCompile(`^running (\d+) tests?$`)
	cargoResult  = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; (\d+) filtered out`)
	cargoTest    = regexp.MustCompile(`^test ([^(\s].*?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$`)
	cargoBinary  = regexp.MustCompile(`^\s+(?:Running (\S+(?: [^\s(]\S*)?)(?: \(|$)|Doc-tests (\S+)$)`)
	cargoHash    = regexp.MustCompile(`-[0-9a-f]{16}$`)

	// TAP
	tapVersion   = regexp.MustCompile(`^\s*TAP version \d+$`)
	tapPlan      = regexp.MustCompile(`^\s*1\.\.\d+(?:\s*#.*)?$`)
	tapBail      = regexp.MustCompile(`^\s*Bail out!`)
	tapPoint     = regexp.MustCompile(`^(\s*)(not )?ok(?:\s+\d+)?(?:\s*-)?(?:\s+(.*?))?$`)
	tapDirective = regexp.MustCompile(`(?i)(?:^|\s)#\s*(skip|todo)\S*(?:\s.*)?$`)
	tapSubtest   = regexp.MustCompile(`^(\s*)# Subtest: (.*)$`)
)

// maxResultLine is the longest line the built-in runners read.
const maxResultLine = 64 << 10

// builtin reads one clean line with the built-in runners; it stops at the
// first runner that claims the line.
func (p *Parser) builtin(b []byte) {
	trim := bytes.TrimLeft(b, " \t")
	if len(trim) == 0 {
		p.jestFile = "" // a blank line ends jest's list of a file's tests
		return
	}
	if p.tapYAML >= 0 {
		// A TAP YAML block ends at "..." or at a line indented less than
		// its "---" (then that line is read as usual).
		ind := indentOf(b)
		if ind >= p.tapYAML {
			if bytes.Equal(trim, []byte("...")) {
				p.tapYAML = -1
			}
			return
		}
		p.tapYAML = -1
	}
	tapLast := p.tapLast
	p.tapLast = false
	if len(b) > maxResultLine {
		// No runner prints a result line this long: noise, read by the
		// user's patterns only.
		p.jestSuites, p.utRanSet = false, false
		return
	}
	jestSuites := p.jestSuites
	p.jestSuites = bytes.HasPrefix(b, []byte("Test Suites:"))

	if p.pytestCaptured(b) {
		return
	}
	switch {
	case trim[0] == '{':
		p.goJSONLine(b)
		return
	case bytes.HasPrefix(b, []byte("=== RUN ")):
		p.goVerbose = true
		return
	case bytes.HasPrefix(trim, []byte("--- ")):
		if m := goVLine.FindSubmatch(trim); m != nil {
			p.goVLine(string(m[1]), string(m[2]))
		}
		return
	}
	if p.unittestLine(b) || p.pytestLine(b) || p.cargoLine(b) {
		return
	}
	if jestSuites && p.jestSummaryLine(b) {
		return
	}
	if p.jestTestLine(b, trim) || p.vitestLine(b, trim) || p.nodeLine(b) || p.mochaLine(b, trim) {
		return
	}
	if p.noTestsLine(b) {
		return
	}
	if b[0] == 'o' || b[0] == 'F' {
		if m := goPkgLine.FindSubmatch(b); m != nil {
			p.goPkgSeen = true
			p.goPkgResult(b)
			p.flushGo(string(m[2]))
			return
		}
	}
	p.tapLine(b, tapLast)
}

// go test -json

type goEvent struct {
	Action  string
	Package string
	Test    string
}

func (p *Parser) goJSONLine(b []byte) {
	if !bytes.Contains(b, []byte(`"Test":`)) {
		p.goJSONPackage(b)
		return
	}
	var action string
	switch {
	case bytes.Contains(b, []byte(`"Action":"pass"`)):
		action = "pass"
	case bytes.Contains(b, []byte(`"Action":"fail"`)):
		action = "fail"
	case bytes.Contains(b, []byte(`"Action":"skip"`)):
		action = "skip"
	default:
		return
	}
	pkg, okP := jsonField(b, `"Package":"`)
	test, okT := jsonField(b, `"Test":"`)
	if !okP || !okT {
		// Escapes or an odd layout: let encoding/json read it.
		var ev goEvent
		if json.Unmarshal(b, &ev) != nil || ev.Action != action {
			return
		}
		pkg, test = ev.Package, ev.Test
	}
	if test == "" {
		return
	}
	name := qualify(pkg, test)
	p.goJSON.seen = true
	switch action {
	case "pass":
		p.goJSON.passed++
		p.passed.add(name)
	case "fail":
		p.goJSON.failed++
	case "skip":
		p.goJSON.skipped++
		p.skipped.add(name)
	}
}

// jsonField returns the string value after key when it holds no escapes;
// a missing key is an empty value.
func jsonField(b []byte, key string) (string, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return "", true
	}
	v := b[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 || bytes.IndexByte(v[:j], '\\') >= 0 {
		return "", false
	}
	return string(v[:j]), true
}

func qualify(pkg, test string) string {
	if pkg == "" {
		return test
	}
	return pkg + "." + test
}

// go test -v

func (p *Parser) goVLine(status, name string) {
	p.goV.seen = true
	switch status {
	case "PASS":
		p.goV.passed++
		p.goPend(name, false)
	case "FAIL":
		p.goV.failed++
	case "SKIP":
		p.goV.skipped++
		p.goPend(name, true)
	}
}

// goPend keeps a name until its package's result line; past MaxNameBytes
// worth of waiting names they are kept without their package.
func (p *Parser) goPend(name string, skipped bool) {
	if len(p.goPending) >= 1<<16 {
		p.flushGo("")
	}
	p.goPending = append(p.goPending, pendingName{name, skipped})
}

func (p *Parser) flushGo(pkg string) {
	for _, n := range p.goPending {
		p.pendName(qualify(pkg, n.name), n.skipped)
	}
	p.goPending = p.goPending[:0]
	p.qualifyGo(pkg)
}

// pytest

var (
	pytestCapturedStart = regexp.MustCompile(`^-+ Captured \w+ \w+ -+$`)
	pytestSection       = regexp.MustCompile(`^(?:=+|_+|-+) .*\S (?:=+|_+|-+)$`)
)

// pytestCaptured says the line is inside a "Captured stdout call" section of
// pytest's report: what a test printed, which counts for no runner (a test
// may print a fake summary line). A summary line there is kept aside: it is
// pytest's own only if no other section header follows it (pytest -rN puts
// the summary right after the last captured section).
func (p *Parser) pytestCaptured(b []byte) bool {
	if !p.inCaptured {
		if len(b) > 0 && b[0] == '-' && pytestCapturedStart.Match(b) {
			p.inCaptured = true
			return true
		}
		return false
	}
	if len(b) == 0 || (b[0] != '-' && b[0] != '=' && b[0] != '_') || !pytestSection.Match(b) {
		return true
	}
	if t, ok := pytestSummaryTally(b); ok {
		p.pytestCand, p.pytestCandSet = t, true
		return true
	}
	p.pytestCandSet = false
	p.inCaptured = pytestCapturedStart.Match(b)
	if !p.inCaptured {
		return false // a section header: read it as usual
	}
	return true
}

// pytestEnd ends a pytest session: a summary line kept aside in a captured
// section counts when nothing came after it.
func (p *Parser) pytestEnd() {
	if p.pytestCandSet {
		p.pytest.set(p.pytestCand)
		p.pytestCandSet = false
	}
	p.inCaptured = false
	p.pytest.commit()
}

func pytestSummaryTally(b []byte) (tally, bool) {
	if !bytes.Contains(b, []byte(" in ")) {
		return tally{}, false
	}
	m := pytestSummary.FindSubmatch(b)
	if m == nil {
		return tally{}, false
	}
	var t tally
	for _, part := range strings.Split(string(m[1]), ", ") {
		n, word := countWord(part)
		switch word {
		case "passed", "xpassed":
			t.passed += n
		case "failed", "error", "errors":
			t.failed += n
		case "skipped", "deselected", "xfailed":
			t.skipped += n
		}
	}
	return t, true
}

func (p *Parser) pytestLine(b []byte) bool {
	if b[0] == '=' && pytestStart.Match(b) {
		p.pytestEnd()
		p.pytestHeaded = true
		return true
	}
	if !p.pytestHeaded && p.pytest.pending.seen && strings.IndexByte(".FsxXER", b[0]) >= 0 && pytestProgress.Match(b) {
		// pytest -q prints no header: its first progress line after a
		// summary starts the next run.
		p.pytestEnd()
		return true
	}
	if t, ok := pytestSummaryTally(b); ok {
		p.pytestCandSet = false
		p.pytest.set(t)
		return true
	}
	if !bytes.Contains(b, []byte("::")) {
		if !bytes.HasPrefix(b, []byte("SKIPPED [")) {
			return false
		}
		if m := pytestShortSkip.FindSubmatch(b); m != nil {
			name := string(m[1])
			if len(m[2]) > 0 {
				name += ": " + string(m[2])
			}
			p.skipped.add(name)
			return true
		}
		return false
	}
	if m := pytestVerbose.FindSubmatch(b); m != nil {
		p.pytestName(string(m[2]), string(m[1]))
		return true
	}
	if m := pytestShort.FindSubmatch(b); m != nil {
		p.pytestName(string(m[1]), string(m[2]))
		return true
	}
	return false
}

func (p *Parser) pytestName(status, name string) {
	switch status {
	case "PASSED", "XPASS":
		p.passed.add(name)
	case "SKIPPED", "XFAIL":
		p.skipped.add(name)
	}
}

// countWord splits "3 passed" into 3 and "passed".
func countWord(s string) (int, string) {
	num, word, _ := strings.Cut(strings.TrimSpace(s), " ")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, ""
	}
	return n, strings.TrimSpace(word)
}

// unittest

func (p *Parser) unittestLine(b []byte) bool {
	if p.utRanSet {
		p.utRanSet = false
		if m := utResult.FindSubmatch(b); m != nil {
			t := tally{passed: p.utRan, seen: true}
			for _, kv := range strings.Split(string(m[1]), ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if !ok {
					continue
				}
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					continue
				}
				switch k {
				case "failures", "errors", "unexpected successes":
					t.failed += n
				case "skipped", "expected failures":
					t.skipped += n
				default:
					continue
				}
				t.passed -= n
			}
			if t.passed < 0 {
				t.passed = 0 // subTest failures count more than tests
			}
			p.unittest.add(t)
			return true
		}
		if bytes.Equal(b, []byte("NO TESTS RAN")) {
			p.unittest.add(tally{seen: true})
			return true
		}
	}
	if b[0] == 'R' {
		if m := utRan.FindSubmatch(b); m != nil {
			p.utRan, _ = strconv.Atoi(string(m[1]))
			p.utRanSet = true
			return true
		}
	}
	if !bytes.HasPrefix(b, []byte("test")) {
		// the result line of a test with a docstring
	} else if m := utVerbose.FindSubmatch(b); m != nil {
		method, where := string(m[1]), string(m[2])
		name := where
		if !strings.HasSuffix(where, "."+method) {
			name = where + "." + method // Python before 3.11
		}
		if len(m[3]) == 0 {
			p.utName = name // the result follows a docstring line
			return true
		}
		p.utName = ""
		p.unittestOutcome(name, string(m[3]))
		return true
	}
	if p.utName != "" && bytes.Contains(b, []byte("... ")) {
		if m := utOutcome.FindSubmatch(b); m != nil {
			p.unittestOutcome(p.utName, string(m[2]))
			p.utName = ""
			return true
		}
	}
	return false
}

func (p *Parser) unittestOutcome(name, outcome string) {
	switch {
	case outcome == "ok":
		p.passed.add(name)
	case strings.HasPrefix(outcome, "skipped"), outcome == "expected failure":
		p.skipped.add(name)
	}
}

// cargo test

func (p *Parser) cargoLine(b []byte) bool {
	switch {
	case bytes.HasPrefix(b, []byte("running ")):
		if cargoRunning.Match(b) {
			p.cargo.commit()
			return true
		}
	case bytes.HasPrefix(b, []byte("test result: ")):
		if m := cargoResult.FindSubmatch(b); m != nil {
			p.cargo.set(tally{
				passed:  atoi(m[1]),
				failed:  atoi(m[2]),
				skipped: atoi(m[3]) + atoi(m[4]),
			})
			return true
		}
	case bytes.HasPrefix(b, []byte("test ")):
		if m := cargoTest.FindSubmatch(b); m != nil {
			name := string(m[1])
			if p.cargoBin != "" {
				name = p.cargoBin + " " + name
			}
			switch {
			case string(m[2]) == "ok":
				p.passed.add(name)
			case bytes.HasPrefix(m[2], []byte("ignored")):
				p.skipped.add(name)
			}
			return true
		}
	case b[0] == ' ':
		if m := cargoBinary.FindSubmatch(b); m != nil {
			if len(m[1]) > 0 {
				p.cargoBin = cargoHash.ReplaceAllString(string(m[1]), "")
			} else {
				p.cargoBin = "doc-tests " + string(m[2])
			}
			return true
		}
	}
	return false
}

func atoi(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// jest

func (p *Parser) jestSummaryLine(b []byte) bool {
	m := jestSummary.FindSubmatch(b)
	if m == nil {
		return false
	}
	t := summaryTally(strings.Split(strings.TrimSuffix(string(m[1]), ", "), ", "))
	t.seen = true
	p.jest.add(t)
	return true
}

// jest --verbose lists a file's tests under "PASS file" / "FAIL file",
// indented under their describe blocks, until a blank line.
func (p *Parser) jestTestLine(b, trim []byte) bool {
	if bytes.HasPrefix(trim, []byte("PASS ")) || bytes.HasPrefix(trim, []byte("FAIL ")) {
		if m := jestFile.FindSubmatch(b); m != nil && !bytes.Contains(b, []byte(" > ")) {
			p.jestFile = string(m[1])
			p.jestDescribe = p.jestDescribe[:0]
			return true
		}
	}
	if p.jestFile == "" {
		return false
	}
	ind := indentOf(b)
	if ind == 0 || bytes.HasPrefix(trim, []byte("●")) {
		p.jestFile = ""
		return false
	}
	for len(p.jestDescribe) > 0 && p.jestDescribe[len(p.jestDescribe)-1].indent >= ind {
		p.jestDescribe = p.jestDescribe[:len(p.jestDescribe)-1]
	}
	mark, rest := marker(trim)
	if mark == "" {
		if len(p.jestDescribe) < 64 {
			p.jestDescribe = append(p.jestDescribe, indented{ind, string(trim)})
		}
		return true
	}
	title := strings.TrimSpace(durationSuffix.ReplaceAllString(rest, ""))
	parts := []string{p.jestFile}
	for _, d := range p.jestDescribe {
		parts = append(parts, d.name)
	}
	switch mark {
	case "✓", "√":
		p.passed.add(strings.Join(append(parts, title), " › "))
	case "○":
		p.skipped.add(strings.Join(append(parts, strings.TrimPrefix(title, "skipped ")), " › "))
	case "✎":
		p.skipped.add(strings.Join(append(parts, strings.TrimPrefix(title, "todo ")), " › "))
	}
	return true
}

// durationSuffix is a test line's timing: "(3 ms)", "4ms", "(2.5s)".
var durationSuffix = regexp.MustCompile(`\s+\(?\d+(?:\.\d+)?\s?m?s\)?$`)

// marker splits a test line's leading status glyph from the rest.
func marker(trim []byte) (string, string) {
	for _, m := range []string{"✓", "√", "✕", "×", "○", "✎", "↓", "□"} {
		if bytes.HasPrefix(trim, []byte(m+" ")) {
			return m, string(trim[len(m)+1:])
		}
	}
	return "", ""
}

// summaryTally adds up the "N passed", "N failed", "N skipped", "N todo"
// parts of a jest or vitest summary line.
func summaryTally(parts []string) tally {
	var t tally
	for _, part := range parts {
		n, word := countWord(part)
		switch word {
		case "passed":
			t.passed += n
		case "failed":
			t.failed += n
		case "skipped", "todo":
			t.skipped += n
		}
	}
	return t
}

// vitest

func (p *Parser) vitestLine(b, trim []byte) bool {
	if vitestStart.Match(b) {
		p.vitest.commit()
		return true
	}
	if bytes.HasPrefix(trim, []byte("Tests ")) {
		if m := vitestSummary.FindSubmatch(b); m != nil {
			p.vitest.set(summaryTally(strings.Split(string(m[1]), "|")))
			return true
		}
	}
	// vitest --reporter=verbose: "✓ file > describe > test 4ms"
	mark, rest := marker(trim)
	if mark == "" || !strings.Contains(rest, " > ") {
		return false
	}
	name := strings.TrimSpace(durationSuffix.ReplaceAllString(rest, ""))
	switch mark {
	case "✓", "√":
		p.passed.add(name)
	case "↓", "□":
		p.skipped.add(name)
	}
	return true
}

// mocha

// mochaLine reads mocha's summary: "N passing (Xms)" opens it, "N pending"
// and "N failing" follow. The last summary of the output counts (a test
// that prints a look-alike prints it before mocha's own).
func (p *Parser) mochaLine(b, trim []byte) bool {
	if len(trim) == 0 || trim[0] < '0' || trim[0] > '9' {
		return false
	}
	if m := mochaPassing.FindSubmatch(b); m != nil {
		p.mocha.set(tally{passed: atoi(m[1])})
		p.mochaOpen = true
		return true
	}
	if !p.mochaOpen {
		return false
	}
	if m := mochaOther.FindSubmatch(b); m != nil {
		t := p.mocha.pending
		switch string(m[2]) {
		case "pending":
			t.skipped = atoi(m[1])
		case "failing":
			t.failed = atoi(m[1])
			p.mochaOpen = false
			p.fails.mochaFailing = true
			p.fails.close() // another runner's failure above does not take mocha's
		}
		p.mocha.set(t)
		return true
	}
	return false
}

// node --test with the spec reporter

func (p *Parser) nodeLine(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("ℹ ")) {
		return false
	}
	m := nodeSpec.FindSubmatch(b)
	if m == nil {
		return false
	}
	n := atoi(m[2])
	t := tally{seen: true}
	switch string(m[1]) {
	case "pass":
		t.passed = n
	case "fail", "cancelled":
		t.failed = n
	case "skipped", "todo":
		t.skipped = n
	}
	p.node.add(t)
	return true
}
