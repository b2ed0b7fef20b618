package testcount

import (
	"bytes"
	"strings"
)

// failPytest reads pytest's FAILURES and ERRORS sections and its short
// test summary.
func (p *Parser) failPytest(b, trim []byte) bool {
	f := &p.fails
	switch b[0] {
	case '=':
		m := pytestSectionHead.FindSubmatch(b)
		if m == nil {
			return false
		}
		if f.openKind == kindPytest {
			f.close()
		}
		title := string(m[1])
		f.pySect = title == "FAILURES" || title == "ERRORS"
		f.pySumm = title == "short test summary info"
		return true
	case '_':
		if !f.pySect {
			return false
		}
		m := pytestBlockHead.FindSubmatch(b)
		if m == nil {
			return false
		}
		name := pytestErrorAt.ReplaceAllString(string(m[1]), "")
		if i := f.add("pytest", name, nil, kindPytest); i >= 0 {
			if f.pyUnseen == nil {
				f.pyUnseen = map[int]bool{}
			}
			f.pyUnseen[i] = true
		}
		return true
	case '-':
		if f.openKind == kindPytest && pytestCapturedStart.Match(b) {
			f.done = true // what the test printed
			return true
		}
	}
	if f.openKind == kindPytest && !f.done {
		if m := pytestFrame.FindSubmatch(b); m != nil && !f.stackKept && pytestTestFile(string(m[1])) {
			// The first frame in a test file: where the test failed (its
			// own line, when the exception came from a helper).
			f.stackKept = true
			f.locLine(strings.TrimRight(string(b), " "))
			return true
		}
		switch {
		case b[0] == 'E' && (len(b) == 1 || b[1] == ' '):
			if f.open >= 0 && f.meta[f.open].loc > 0 && f.meta[f.open].head == 0 {
				f.headLine(string(b)) // the frame came first: the exception leads
			} else {
				f.line(string(b))
			}
		case pytestLocation.Match(b):
			f.line(string(b))
		}
		return true
	}
	if f.pySumm && (b[0] == 'F' || b[0] == 'E' || b[0] == '[') {
		m := pytestShortFail.FindSubmatch(b)
		if m == nil {
			return false
		}
		id, msg := string(m[2]), string(m[3])
		// The block's title is the id past the file, "::" read as ".".
		_, title, _ := strings.Cut(id, "::")
		title = strings.ReplaceAll(title, "::", ".")
		for i := range f.list {
			fl := &f.list[i]
			if f.pyUnseen[i] && fl.Name == title {
				delete(f.pyUnseen, i)
				delete(f.index, "pytest\x00"+fl.Name)
				fl.Name = id
				f.index["pytest\x00"+id] = i
				if len(fl.Lines) == 0 && msg != "" {
					fl.Lines = []string{msg}
				}
				return true
			}
		}
		var lines []string
		if msg != "" {
			lines = []string{msg}
		}
		f.add("pytest", id, lines, kindNone)
		f.close()
		return true
	}
	return false
}

// failCargo reads cargo test's failures section.
func (p *Parser) failCargo(b, trim []byte) bool {
	f := &p.fails
	if b[0] == '-' && bytes.HasPrefix(b, []byte("---- ")) {
		if m := cargoStdout.FindSubmatch(b); m != nil {
			name := string(m[1])
			if p.cargoBin != "" {
				name = p.cargoBin + " " + name
			}
			f.add("cargo", name, nil, kindCargo)
			return true
		}
	}
	if f.openKind != kindCargo {
		if p.cargoBin == "" || b[0] != 't' {
			return false
		}
		// cargo test -- --nocapture: the panic comes as the test runs, in
		// the thread named after the test.
		m := cargoPanicked.FindSubmatch(b)
		if m == nil {
			return false
		}
		f.add("cargo", p.cargoBin+" "+string(m[1]), nil, kindCargo)
	}
	if bytes.Equal(b, []byte("failures:")) || bytes.HasPrefix(b, []byte("test result: ")) {
		f.close()
		return false
	}
	if f.done {
		// RUST_BACKTRACE: the test's own frame says where in the test it
		// failed, when the panic was elsewhere.
		if f.stackKept || f.cargoTest == "" {
			return true
		}
		if m := cargoFrame.FindSubmatch(b); m != nil {
			fn := string(m[1])
			f.cargoFrame = fn == f.cargoTest || strings.HasSuffix(fn, "::"+f.cargoTest)
			return true
		}
		if m := cargoAt.FindSubmatch(b); m != nil && f.cargoFrame {
			f.stackKept = true
			loc := strings.TrimPrefix(string(m[1]), "./")
			if fl := f.list[f.open]; len(fl.Lines) == 0 || !strings.Contains(fl.Lines[0], " panicked at "+loc+":") {
				f.line("in the test at " + loc) // the panic's line says where it was
			}
		}
		return true
	}
	if m := cargoPanicked.FindSubmatchIndex(b); m != nil {
		f.cargoTest = string(b[m[2]:m[3]])
		// The thread's id changes every run: the same failure must read the same.
		f.line("thread '" + string(b[m[2]:m[3]]) + "' panicked at " + string(b[m[1]:]))
		return true
	}
	if len(f.list[f.open].Lines) > 0 {
		if bytes.HasPrefix(b, []byte("stack backtrace:")) || bytes.HasPrefix(b, []byte("note: ")) {
			f.done = true
		} else {
			f.line(string(b))
		}
	}
	return true
}

// failUnittest reads unittest's "FAIL: test (id)" blocks: the test's
// frames (File lines outside the standard library, with their source
// line), then the exception, the assertion and its diff.
func (p *Parser) failUnittest(b, trim []byte) bool {
	f := &p.fails
	if b[0] == 'F' || b[0] == 'E' || b[0] == 'U' {
		if m := utFailHead.FindSubmatch(b); m != nil {
			method, where := string(m[2]), string(m[3])
			name := where
			if !strings.HasSuffix(where, "."+method) {
				name = where + "." + method
			}
			if len(m[4]) > 0 {
				name += " " + string(m[4])
			}
			f.add("unittest", name, nil, kindUnittest)
			f.utSect = false
			return true
		}
	}
	if f.openKind != kindUnittest {
		return false
	}
	if len(trim) >= 20 && (bytes.Count(trim, []byte("-")) == len(trim) || bytes.Count(trim, []byte("=")) == len(trim)) {
		if f.utSect || bytes.HasPrefix(trim, []byte("=")) {
			f.close() // the block ends where the next one, or the summary, begins
			return true
		}
		f.utSect = true // the line under the block's title
		return true
	}
	if bytes.HasPrefix(b, []byte("Traceback (most recent call last):")) {
		return true
	}
	if m := utFile.FindSubmatch(b); m != nil {
		file := string(m[1])
		f.utCode = false
		if !strings.Contains(file, "/lib/python") && !strings.HasPrefix(file, "<") {
			f.locLine(string(b)) // the first is the test's own frame
			f.utCode = true
		}
		return true
	}
	if f.utCode {
		f.utCode = false
		if indentOf(b) >= 4 {
			f.line(string(b))
			return true
		}
	}
	if indentOf(b) >= 4 && len(f.list[f.open].Lines) > 0 && !f.stackKept {
		// the source of a standard library frame, or its ^^^^ marks
		return true
	}
	if !bytes.HasPrefix(b, []byte("  ")) && !f.stackKept {
		f.stackKept = true // the exception's line: what follows is its message
		f.headLine(string(b))
		return true
	}
	f.line(string(b))
	return true
}

// failMocha reads the failures mocha's spec reporter lists after its
// "N failing" line: "  1) suite" and the rest of the title, indented, up to
// the part that ends with ":", then the message, the diff and the first
// stack line in the tests.
func (p *Parser) failMocha(b, trim []byte) bool {
	f := &p.fails
	if !f.mochaFailing {
		return false
	}
	if m := mochaFailHead.FindSubmatch(b); m != nil {
		title := strings.TrimSpace(string(m[2]))
		done := strings.HasSuffix(title, ":")
		if i := f.add("mocha", strings.TrimSuffix(title, ":"), nil, kindMocha); i >= 0 && f.open == i {
			f.base = 0 // its diff is less indented than its message: dedented in Failures
		}
		f.mochaTitle = !done
		return true
	}
	if f.openKind != kindMocha {
		return false
	}
	if f.mochaTitle {
		part := strings.TrimSpace(string(trim))
		fl := &f.list[f.open]
		delete(f.index, fl.Runner+"\x00"+fl.Name)
		fl.Name = strings.TrimSpace(fl.Name + " " + strings.TrimSuffix(part, ":"))
		if len(fl.Name) > MaxNameLen {
			fl.Name = strings.ToValidUTF8(fl.Name[:MaxNameLen], "") + "…"
		}
		f.index[fl.Runner+"\x00"+fl.Name] = f.open
		f.mochaTitle = !strings.HasSuffix(part, ":")
		return true
	}
	p.failStackOrLine(b)
	return true
}

// failJest reads jest's "●" blocks and vitest's "FAIL file > test" blocks.
func (p *Parser) failJest(b, trim []byte) bool {
	f := &p.fails
	if bytes.HasPrefix(trim, []byte("FAIL ")) {
		if m := vitestFailHead.FindSubmatch(trim); m != nil {
			f.add("vitest", string(m[1]), nil, kindVitest)
			return true
		}
		if m := jestFailFile.FindSubmatch(trim); m != nil {
			f.jestFile = string(m[1])
			if f.openKind == kindJest {
				f.close()
			}
			return true
		}
	}
	if bytes.HasPrefix(trim, []byte("PASS ")) || bytes.HasPrefix(b, []byte("Test Suites:")) || bytes.HasPrefix(b, []byte("Summary of all failing tests")) {
		if f.openKind == kindJest {
			f.close()
		}
		f.jestFile = ""
		return false
	}
	if bytes.HasPrefix(trim, []byte("● ")) {
		title := strings.TrimSpace(string(trim[len("● "):]))
		if title == "Console" {
			if f.openKind == kindJest {
				f.close()
			}
			return true
		}
		name := title
		if f.jestFile != "" {
			name = f.jestFile + " › " + title
		}
		f.add("jest", name, nil, kindJest)
		return true
	}
	switch f.openKind {
	case kindJest:
		if bytes.HasPrefix(trim, []byte("at ")) {
			if !f.stackKept {
				p.failStackOrLine(b) // the first frame in the tests: file:line:column
			}
			f.done = true
			return true
		}
		if f.done || jestCodeFrame.Match(trim) {
			f.done = true
			return true
		}
		f.line(string(b))
		return true
	case kindVitest:
		if f.done {
			return true
		}
		if vitestFrame.Match(trim) {
			f.done = true
			if bytes.HasPrefix(trim, []byte("❯ ")) {
				// "❯ src/calc.spec.ts:10:24": where in the test it failed.
				f.locLine(string(trim))
			}
			return true
		}
		f.line(string(b))
		return true
	}
	return false
}

// pytestTestFile says whether a traceback's file is a test file: test_*.py
// or *_test.py, or a .py file under a tests/ or test/ folder.
func pytestTestFile(file string) bool {
	file = strings.ReplaceAll(file, "\\", "/")
	base := file[strings.LastIndexByte(file, '/')+1:]
	if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") {
		return true
	}
	return strings.HasPrefix(file, "tests/") || strings.HasPrefix(file, "test/") || strings.Contains(file, "/tests/") || strings.Contains(file, "/test/")
}
