package testcount

import (
	"bytes"
	"encoding/json"
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
	goroutineLine   = regexp.MustCompile(`^goroutine \d+ \[.*\]:$`)

	pytestSectionHead = regexp.MustCompile(`^=+ (.*?) =+$`)
	pytestBlockHead   = regexp.MustCompile(`^_{3,} (.+?) _{3,}$`)
	pytestLocation    = regexp.MustCompile(`^\S+:\d+: [A-Z][\w.]*$`)
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
	goFrameFile = regexp.MustCompile(`^\t(\S+\.go:\d+)(?: \+0x[0-9a-f]+)?$`)

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

	utSect       bool   // unittest: inside a FAIL/ERROR block's traceback
	utCode       bool   // unittest: the next line is the source line of a kept File line
	mochaFailing bool   // mocha: its "N failing" line was read: the failures follow
	mochaTitle   bool   // mocha: the failure's title is still being read
	stackKept    bool   // a location in the test was kept from the stack
	tapRepeat    bool   // mocha's TAP: the stack repeats the message: skip to its frames
	goFunc       string // go panic: the function of the frame whose file line comes next
	cargoTest    string // cargo: the failing test's function, to find its frame
	cargoFrame   bool   // cargo: the frame line just read is the test's
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

// failGo reads go test's text output.
func (p *Parser) failGo(b, trim []byte, ind int) bool {
	f := &p.fails
	if bytes.HasPrefix(b, []byte("=== ")) {
		if m := goRunLine.FindSubmatch(b); m != nil {
			if f.openKind == kindGo {
				f.close()
			}
			f.goCur = ""
			if !bytes.HasPrefix(b, []byte("=== PAUSE")) {
				f.goCur = string(m[1])
			}
			return true
		}
	}
	if trim[0] == '-' && bytes.HasPrefix(trim, []byte("--- ")) {
		if m := goVLine.FindSubmatch(trim); m != nil {
			name := string(m[2])
			buf := f.takeBuf("\x00" + name)
			f.goCur = ""
			if f.openKind == kindGo {
				f.close()
			}
			if string(m[1]) == "FAIL" {
				if i := f.add("go", name, buf, kindGo); i >= 0 && f.open == i {
					f.openInd = ind
					f.goUnq = append(f.goUnq, i)
				}
			}
			return true
		}
	}
	if f.openKind == kindGo {
		switch {
		case ind > f.openInd:
			f.line(string(b))
			return true
		case bytes.HasPrefix(b, []byte("panic: ")):
			f.line(string(b))
			f.openKind = kindGoPanic
			return true
		}
		f.close()
	}
	if f.openKind == kindGoPanic {
		switch {
		case len(b) > 0 && b[0] == '\t':
			if m := goFrameFile.FindSubmatch(b); m != nil && !f.stackKept && strings.HasSuffix(strings.SplitN(string(m[1]), ":", 2)[0], "_test.go") {
				f.stackKept = true
				f.locLine("at " + string(m[1]) + " (" + f.goFunc + ")")
			}
			return true
		case goroutineLine.Match(b), bytes.HasPrefix(b, []byte("created by ")):
			return true
		case ind == 0 && bytes.HasSuffix(b, []byte(")")) && !bytes.HasPrefix(b, []byte("FAIL")) && !bytes.HasPrefix(b, []byte("exit status")):
			// "pkg.TestX(0xc0001)": the frame whose file comes next.
			fn := string(b)
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			f.goFunc = fn
			return true
		}
		f.close()
	}
	if f.goCur != "" && ind > 0 && !goResultAnyLine.Match(b) {
		f.bufLine("\x00"+f.goCur, string(b))
		return true
	}
	return false
}

// qualifyGo names go -v failures with their package, once its result line
// names it.
func (p *Parser) qualifyGo(pkg string) {
	f := &p.fails
	for _, i := range f.goUnq {
		if pkg == "" {
			continue
		}
		fl := &f.list[i]
		delete(f.index, fl.Runner+"\x00"+fl.Name)
		fl.Name = qualify(pkg, fl.Name)
		if _, ok := f.index[fl.Runner+"\x00"+fl.Name]; !ok {
			f.index[fl.Runner+"\x00"+fl.Name] = i
		}
	}
	f.goUnq = f.goUnq[:0]
	// Output of tests that never ended belongs to no later test.
	for k := range f.goBuf {
		if strings.HasPrefix(k, "\x00") {
			delete(f.goBuf, k)
		}
	}
}

type goOutput struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// failJSON reads go test -json's events; it says whether the line was one
// (else it is a message line that starts with "{").
func (p *Parser) failJSON(b []byte) bool {
	f := &p.fails
	if !bytes.Contains(b, []byte(`"Action":`)) {
		return false
	}
	if !bytes.Contains(b, []byte(`"Test":`)) {
		return true
	}
	var action string
	for _, a := range []string{"output", "fail", "pass", "skip"} {
		if bytes.Contains(b, []byte(`"Action":"`+a+`"`)) {
			action = a
			break
		}
	}
	if action == "" {
		return true
	}
	var ev goOutput
	if json.Unmarshal(b, &ev) != nil || ev.Action != action || ev.Test == "" {
		return true
	}
	key := qualify(ev.Package, ev.Test)
	switch action {
	case "output":
		for _, l := range strings.Split(strings.TrimRight(ev.Output, "\n"), "\n") {
			l = strings.TrimRight(l, " \t\r")
			if l == "" || strings.HasPrefix(l, "=== ") || goResultAnyLine.MatchString(l) {
				continue
			}
			if goroutineLine.MatchString(l) {
				// A panic's stack follows: its message was above it.
				f.bufLine(key, "")
				continue
			}
			if buf := f.goBuf[key]; len(buf) > 0 && buf[len(buf)-1] == "" {
				f.goStackLine(key, l)
				continue
			}
			f.bufLine(key, l)
		}
	case "fail":
		f.add("go-json", key, f.takeBuf(key), kindNone)
		f.close()
		delete(f.goFn, key)
	default:
		delete(f.goBuf, key)
		delete(f.goFn, key)
	}
	return true
}

// goStackLine reads a line of a panic's stack in go test -json's output
// of a test: the first frame in a _test.go file is kept, before the end
// of the test's message.
func (f *fails) goStackLine(key, l string) {
	if m := goFrameFile.FindStringSubmatch(l); m != nil {
		fn, ok := f.goFn[key]
		if !ok || !strings.HasSuffix(strings.SplitN(m[1], ":", 2)[0], "_test.go") {
			return
		}
		buf := f.goBuf[key]
		f.goBuf[key] = append(buf[:len(buf)-1], "at "+m[1]+" ("+fn+")", "")
		f.goFn[key] = "\x00" // kept: no other frame
		return
	}
	if f.goFn[key] == "\x00" || strings.HasPrefix(l, "created by ") || !strings.HasSuffix(l, ")") {
		return
	}
	if f.goFn == nil {
		f.goFn = map[string]string{}
	}
	if i := strings.LastIndexByte(l, '('); i > 0 {
		l = l[:i]
	}
	f.goFn[key] = l
}

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
		if (b[0] == 'E' && (len(b) == 1 || b[1] == ' ')) || pytestLocation.Match(b) {
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
