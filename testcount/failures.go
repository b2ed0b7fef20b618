package testcount

import (
	"bytes"
	"regexp"
	"strings"
)

// Failure is one failing test as the output shows it: its name and the
// lines that say why it failed (the assertion's message, the panic), not
// its whole output.
type Failure struct {
	// Runner is the runner whose output named it: "go", "go-json",
	// "pytest", "jest", "vitest", "cargo" or "tap".
	Runner string `json:"runner"`
	Name   string `json:"name"`
	// Lines are the message lines, without the indentation they share, at
	// most MaxFailureLines of them, each cut at MaxFailureLineLen bytes.
	Lines []string `json:"lines,omitempty"`
}

const (
	// MaxFailures is the most failing tests Failures returns; the rest are
	// only counted.
	MaxFailures = 100
	// MaxFailureLines is the most message lines kept per failing test: a
	// failure signal has room for 40 lines, the test's name among them,
	// and shares them out among the failing tests it shows.
	MaxFailureLines = 38
	// MaxFailureLineLen is the longest message line kept; longer ones are cut.
	MaxFailureLineLen = 500
	// maxPending caps the tests whose output waits for their result (go
	// test -v and -json interleave parallel tests).
	maxPending = 1024
)

// What each runner prints for a failing test (Failures):
//
//   - go test: the indented lines under "=== RUN name" (-v) or under
//     "--- FAIL: name" (without -v), and a "panic:" line after it with the
//     first frame of its stack in a _test.go file ("at file:line (func)");
//   - go test -json: the "output" events of a test whose "fail" event
//     comes, a panic's frame in a _test.go file as above;
//   - unittest: the "FAIL: test (id)" blocks: the traceback's frames
//     outside the standard library with their source line, then the
//     exception, the assertion and its diff;
//   - mocha: the numbered failures after "N failing" (spec reporter), named
//     by their whole title, with the message, the diff and the first stack
//     frame outside Node and node_modules; its TAP reporter's indented
//     lines under "not ok", the repeated message dropped;
//   - pytest: the "E" lines and the "file:line: Exception" line of each
//     block in the FAILURES and ERRORS sections, named by the short test
//     summary ("FAILED id - message"), whose message counts when there is
//     no block;
//   - jest: the lines under "● name" down to the code frame, and the
//     stack's first frame in the tests (file:line:column);
//   - vitest: the lines under "FAIL file > name" down to the code frame,
//     and its "❯ file:line:column" line;
//   - cargo test: the panic ("thread 'name' panicked at ...") and its
//     message under "---- name stdout ----", and with RUST_BACKTRACE the
//     test's own frame when the panic was elsewhere;
//
// Lines that are only "{" or "}" are message lines like any other (a
// diff's braces), unless they are go test -json events.
//   - TAP: the YAML diagnostics under "not ok", but their stack and timing.
var (
	goRunLine       = regexp.MustCompile(`^=== (?:RUN|CONT|NAME|PAUSE)\s+(.+)$`)
	goResultAnyLine = regexp.MustCompile(`^\s*--- (?:PASS|FAIL|SKIP): `)
	goroutineLine   = regexp.MustCompile(`^goroutine \d+(?: [^\[]*)? \[.*\]:$`) // GOTRACEBACK=system: "goroutine 21 gp=0x… m=0 mp=0x… [running]:"

	pytestSectionHead = regexp.MustCompile(`^=+ (.*?) =+$`)
	pytestBlockHead   = regexp.MustCompile(`^_{3,} (.+?) _{3,}$`)
	pytestLocation    = regexp.MustCompile(`^\S+:\d+: [A-Z][\w.]*$`)
	pytestFrame       = regexp.MustCompile(`^(\S+\.py):\d+:(?: (?:in \S+|[A-Z][\w.]*))?\s*$`)
	pytestErrorAt     = regexp.MustCompile(`^ERROR at (?:setup|teardown|call) of `)
	pytestShortFail   = regexp.MustCompile(`^(?:\[gw\d+\] \[\s*\d+%\] )?(FAILED|ERROR) (\S+::.+?)(?: - (.*))?$`)

	jestFailFile   = regexp.MustCompile(`^FAIL\s+(\S.*?)(?: \(\d.*\))?$`)
	jestCodeFrame  = regexp.MustCompile(`^>?\s*\d+ \|`)
	vitestFailHead = regexp.MustCompile(`^FAIL\s+(\S.* > .+)$`)
	vitestFrame    = regexp.MustCompile(`^(?:❯|⎯)`)

	cargoStdout   = regexp.MustCompile(`^---- (.+?) std(?:out|err) ----$`)
	cargoPanicked = regexp.MustCompile(`^thread '(.*?)'(?: \(\d+\))? panicked at `)
	cargoFrame    = regexp.MustCompile(`^\s+\d+: (\S+)$`)
	cargoAt       = regexp.MustCompile(`^\s+at (\S+:\d+(?::\d+)?)$`)

	// go: a panic's stack: "pkg.TestX(0x…)" then "\t/path/x_test.go:12 +0x1d".
	// GOTRACEBACK=system adds " fp=0x… sp=0x… pc=0x…".
	goFrameFile = regexp.MustCompile(`^\t(\S+\.go:\d+)(?: \+0x[0-9a-f]+)?(?: fp=0x[0-9a-f]+ sp=0x[0-9a-f]+ pc=0x[0-9a-f]+)?$`)

	// unittest: "FAIL: test_x (mod.Class.test_x)", Python before 3.11
	// "FAIL: test_x (mod.Class)", a subtest's parameters after it.
	utFailHead = regexp.MustCompile(`^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)(?: (\(.*\)))?$`)
	utFile     = regexp.MustCompile(`^\s+File "([^"]+)", line \d+, in `)

	// mocha's spec reporter: "  1) suite" then the title's next parts,
	// more indented, the last one ending with ":".
	mochaFailHead = regexp.MustCompile(`^(\s+)\d+\) (.+)$`)
	jsStackAt     = regexp.MustCompile(`^\s*at (?:.* \()?(\S+?:\d+:\d+)\)?$`)
)

// fails is the Parser's state for Failures.
type fails struct {
	list    []Failure
	meta    []failMeta     // beside list: where its location and headline are
	index   map[string]int // runner + "\x00" + name → index in list
	dropped int            // failing tests past MaxFailures

	open     int  // the failure taking message lines, or -1
	openKind byte // which runner's rules take the next lines
	openInd  int  // go: the indentation of its "--- FAIL" line; TAP: of its YAML block
	base     int  // the indentation the block's first message line had, or -1
	skipKey  bool // TAP: inside a key that is not kept (stack, duration)
	done     bool // the block's message is over (jest, vitest, cargo: code frame or stack)

	goFn     map[string]string   // go -json: the function of a panic's frame whose file comes next
	goCur    string              // go -v: the test whose output this is
	goBuf    map[string][]string // go -v and -json: output of tests not yet ended
	goUnq    []int               // go -v: failures whose package is not known yet
	pySect   bool                // pytest: inside FAILURES or ERRORS
	pySumm   bool                // pytest: inside the short test summary
	pyUnseen map[int]bool        // pytest: blocks named by their title, not yet by the summary
	jestFile string

	// TAP: the failing test point the counting rules just read.
	tapFail    bool
	tapName    string
	tapPointIn int

	utSect       bool           // unittest: inside a FAIL/ERROR block's traceback
	utCode       bool           // unittest: the next line is the source line of a kept File line
	mochaFailing bool           // mocha: its "N failing" line was read: the failures follow
	mochaTitle   bool           // mocha: the failure's title is still being read
	stackKept    bool           // a location in the test was kept from the stack
	tapRepeat    bool           // mocha's TAP: the stack repeats the message: skip to its frames
	goFunc       string         // go panic: the function of the frame whose file line comes next
	goHelper     int            // go panic: the kept helper's frame (1-based line), the test's own still to come
	goHelperAt   map[string]int // go -json: the same, per test
	cargoTest    string         // cargo: the failing test's function, to find its frame
	cargoFrame   bool           // cargo: the frame line just read is the test's
}

// failMeta says which of a failure's lines is where in the test it failed
// (loc) and which is the exception's headline when the runner prints it
// after its frames (head); 1-based, 0 when none. Failures moves the
// headline first and the location right after the first line, so that a
// signal short of room keeps both.
type failMeta struct{ loc, head int }

const (
	kindNone = iota
	kindGo
	kindPytest
	kindJest
	kindVitest
	kindCargo
	kindTAPWait // the line after "not ok": "---" opens the YAML block, else indented lines follow
	kindTAP
	kindTAPText // TAP without YAML (mocha): the indented lines under "not ok"
	kindGoPanic // go: the stack after a test's panic
	kindUnittest
	kindMocha
)

func (f *fails) init() { f.open = -1 }

// add records a failing test and opens it for message lines; a test named
// again (jest's summary repeats its failures) keeps its first lines.
func (f *fails) add(runner, name string, lines []string, kind byte) int {
	name = strings.TrimSpace(name)
	if len(name) > MaxNameLen {
		name = strings.ToValidUTF8(name[:MaxNameLen], "") + "…"
	}
	f.close()
	key := runner + "\x00" + name
	if i, ok := f.index[key]; ok {
		if len(f.list[i].Lines) == 0 {
			f.open, f.openKind, f.base = i, byte(kind), -1
			for _, l := range lines {
				f.line(l)
			}
		}
		return i
	}
	if len(f.list) >= MaxFailures {
		f.dropped++
		return -1
	}
	if f.index == nil {
		f.index = map[string]int{}
	}
	f.index[key] = len(f.list)
	f.list = append(f.list, Failure{Runner: runner, Name: name})
	f.meta = append(f.meta, failMeta{})
	f.open, f.openKind, f.base = len(f.list)-1, byte(kind), -1
	for _, l := range lines {
		f.line(l)
	}
	return len(f.list) - 1
}

func (f *fails) close() {
	f.open, f.openKind, f.skipKey, f.done = -1, kindNone, false, false
	f.stackKept, f.utCode, f.mochaTitle, f.goFunc, f.cargoFrame, f.tapRepeat = false, false, false, "", false, false
	f.goHelper = 0
}

// line adds a message line to the open failure, without the indentation
// its block's first line had.
func (f *fails) line(s string) {
	if f.open < 0 {
		return
	}
	fl := &f.list[f.open]
	if len(fl.Lines) >= MaxFailureLines {
		return
	}
	ind := len(s) - len(strings.TrimLeft(s, " \t"))
	if f.base < 0 {
		f.base = ind
	}
	if ind >= f.base {
		s = s[f.base:]
	} // a line less indented (a diff under mocha's message) keeps its own

	if len(s) > MaxFailureLineLen {
		s = strings.ToValidUTF8(s[:MaxFailureLineLen], "") + "…"
	}
	fl.Lines = append(fl.Lines, s)
}

// locLine adds the line that says where in the test it failed.
func (f *fails) locLine(s string) {
	if f.open < 0 {
		return
	}
	n := len(f.list[f.open].Lines)
	f.line(s)
	if len(f.list[f.open].Lines) > n && f.meta[f.open].loc == 0 {
		f.meta[f.open].loc = n + 1
	}
}

// headLine adds the exception's headline of a runner that prints it after
// its frames (unittest).
func (f *fails) headLine(s string) {
	if f.open < 0 {
		return
	}
	n := len(f.list[f.open].Lines)
	f.line(s)
	if len(f.list[f.open].Lines) > n && f.meta[f.open].head == 0 {
		f.meta[f.open].head = n + 1
	}
}

// ordered is a failure's lines with its headline first and its location
// right after the first line.
func ordered(lines []string, m failMeta) []string {
	out := append([]string(nil), lines...)
	move := func(from, to int) {
		if from < 0 || from >= len(out) || to >= len(out) || from <= to {
			return
		}
		l := out[from]
		copy(out[to+1:from+1], out[to:from])
		out[to] = l
	}
	loc := m.loc - 1
	if m.head > 0 {
		move(m.head-1, 0)
		if loc >= 0 && loc < m.head-1 {
			loc++
		}
	}
	if loc >= 0 {
		move(loc, 1)
	}
	return out
}

// bufLine keeps a line of a test's output until its result is known.
func (f *fails) bufLine(name, s string) {
	if f.goBuf == nil {
		f.goBuf = map[string][]string{}
	}
	b, ok := f.goBuf[name]
	if !ok && len(f.goBuf) >= maxPending {
		return
	}
	if n := len(b); n > 0 && b[n-1] == "" {
		return // the output's message is over (bufLine(name, ""))
	}
	if s == "" || len(b) < MaxFailureLines {
		if len(s) > MaxFailureLineLen {
			s = strings.ToValidUTF8(s[:MaxFailureLineLen], "") + "…"
		}
		f.goBuf[name] = append(b, s)
	}
}

func (f *fails) takeBuf(name string) []string {
	b := f.goBuf[name]
	delete(f.goBuf, name)
	if n := len(b); n > 0 && b[n-1] == "" {
		b = b[:n-1]
	}
	return b
}

// Failures returns the failing tests the output named, in the order they
// came, each with its message lines, and how many more failing tests there
// were past MaxFailures. It ends the stream as Counts does. A check whose
// output no runner recognises has none: its failure is in its plain output.
func (p *Parser) Failures() ([]Failure, int) {
	p.Counts()
	var out []Failure
	for i, fl := range p.fails.list {
		if fl.Runner == "tap" && !p.tapSeen {
			continue // "not ok" in output that never proved to be TAP
		}
		if len(fl.Lines) == 0 && p.hasChild(i) {
			continue // a go test that failed only because a subtest did
		}
		fl.Lines = ordered(fl.Lines, p.fails.meta[i])
		if fl.Runner == "mocha" && len(fl.Lines) > 0 {
			// The message and the location as they read; the diff under
			// them keeps its own indentation, less what it shares.
			k := 1
			if p.fails.meta[i].loc > 0 && len(fl.Lines) > 1 {
				k = 2
			}
			for j := 0; j < k; j++ {
				fl.Lines[j] = strings.TrimLeft(fl.Lines[j], " ")
			}
			dedent(fl.Lines[k:])
		}
		out = append(out, fl)
	}
	return out, p.fails.dropped
}

// dedent removes the indentation the lines share.
func dedent(lines []string) {
	if len(lines) == 0 {
		return
	}
	common := -1
	for _, l := range lines {
		if ind := len(l) - len(strings.TrimLeft(l, " ")); common < 0 || ind < common {
			common = ind
		}
	}
	for i := range lines {
		lines[i] = lines[i][common:]
	}
}

func (p *Parser) hasChild(i int) bool {
	fl := p.fails.list[i]
	if fl.Runner != "go" && fl.Runner != "go-json" {
		return false
	}
	for _, o := range p.fails.list {
		if o.Runner == fl.Runner && strings.HasPrefix(o.Name, fl.Name+"/") {
			return true
		}
	}
	return false
}

// failLine reads one clean line for Failures, after the counting rules.
func (p *Parser) failLine(b []byte) {
	f := &p.fails
	if f.tapFail {
		f.tapFail = false
		f.add("tap", f.tapName, nil, kindTAPWait)
		f.openInd = f.tapPointIn
		return
	}
	trim := bytes.TrimLeft(b, " \t")
	ind := len(b) - len(trim)
	if len(trim) == 0 {
		switch f.openKind {
		case kindCargo:
			if len(f.list[f.open].Lines) > 0 {
				f.done = true // the panic's message ends at a blank line
			}
		}
		return
	}
	if trim[0] == '{' && p.failJSON(b) {
		return
	}
	if len(b) > maxResultLine {
		return
	}
	switch f.openKind {
	case kindTAPWait:
		if bytes.Equal(trim, []byte("---")) && ind >= f.openInd {
			f.openKind, f.openInd = kindTAP, ind
			return
		}
		if ind > f.openInd && !tapPoint.Match(b) {
			// mocha's TAP: the message and its stack, indented, no YAML.
			f.openKind = kindTAPText
			p.failStackOrLine(b)
			return
		}
		f.close()
	case kindTAPText:
		if ind > f.openInd && !tapPoint.Match(b) {
			if fl := f.list[f.open]; !f.tapRepeat && len(fl.Lines) > 0 && bytes.HasSuffix(trim, []byte(": "+fl.Lines[0])) {
				// mocha repeats the message in its stack: keep the
				// error's name, then only the stack's frame in the tests.
				f.tapRepeat = true
				f.line(string(b))
				return
			}
			if f.tapRepeat && !jsStackAt.Match(b) {
				return
			}
			p.failStackOrLine(b)
			return
		}
		f.close()
	case kindTAP:
		if ind < f.openInd || (ind == f.openInd && bytes.Equal(trim, []byte("..."))) {
			f.close()
			if ind == f.openInd {
				return
			}
			break
		}
		if ind == f.openInd {
			key, _, _ := strings.Cut(string(trim), ":")
			f.skipKey = key == "stack" || key == "duration_ms" || key == "at"
		}
		if !f.skipKey {
			f.line(string(b))
		}
		return
	}
	if p.failGo(b, trim, ind) || p.failUnittest(b, trim) || p.failPytest(b, trim) || p.failCargo(b, trim) || p.failJest(b, trim) || p.failMocha(b, trim) {
		return
	}
}

// failStackOrLine keeps a message line, or, for a JavaScript stack's "at"
// line, only the first that is not Node's own or a dependency's: the
// file:line:column in the test.
func (p *Parser) failStackOrLine(b []byte) {
	f := &p.fails
	if m := jsStackAt.FindSubmatch(b); m != nil {
		loc := string(m[1])
		if !f.stackKept && !strings.HasPrefix(loc, "node:") && !strings.Contains(loc, "node_modules/") {
			f.stackKept = true
			switch f.openKind {
			case kindMocha:
				f.locLine(string(b)) // dedented with the rest in Failures
			case kindJest:
				// jest's stays last, where the engine's signal test reads it.
				f.line(strings.TrimLeft(string(b), " \t"))
			default:
				f.locLine(strings.TrimLeft(string(b), " \t"))
			}
		}
		return
	}
	f.line(string(b))
}
