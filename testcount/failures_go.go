package testcount

import (
	"bytes"
	"encoding/json"
	"strings"
)

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
				f.goPanicFrame("at "+string(m[1])+" ("+f.goFunc+")", goTestFunc(f.goFunc))
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
		delete(f.goHelperAt, key)
	default:
		delete(f.goBuf, key)
		delete(f.goFn, key)
		delete(f.goHelperAt, key)
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
		at := "at " + m[1] + " (" + fn + ")"
		buf := f.goBuf[key]
		buf = buf[:len(buf)-1]
		if f.goHelperAt[key] > 0 {
			// A helper's frame was kept: the test's own goes before it.
			if !goTestFunc(fn) {
				return
			}
			h := f.goHelperAt[key] - 1
			buf = append(buf[:h], append([]string{at}, buf[h:]...)...)
		} else {
			buf = append(buf, at)
		}
		f.goBuf[key] = append(buf, "")
		if goTestFunc(fn) {
			f.goFn[key] = "\x00" // the test's own frame: no other
			return
		}
		if f.goHelperAt == nil {
			f.goHelperAt = map[string]int{}
		}
		f.goHelperAt[key] = len(buf) // 1-based: the helper's line
		delete(f.goFn, key)
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

// goPanicFrame keeps a frame of a panic's stack in a _test.go file: the
// first such frame, and the test's own (a Test function's) when the first
// was a helper's, before it; none after the test's own.
func (f *fails) goPanicFrame(at string, test bool) {
	if f.open < 0 {
		return
	}
	if f.goHelper == 0 {
		f.locLine(at)
		if test {
			f.stackKept = true
		} else if m := f.meta[f.open].loc; m > 0 {
			f.goHelper = m
		}
		return
	}
	if !test {
		return
	}
	n := len(f.list[f.open].Lines)
	f.line(at)
	if len(f.list[f.open].Lines) > n {
		// The test's frame is the location; ordered puts it before the helper's.
		f.meta[f.open].loc = n + 1
	}
	f.stackKept = true
}

// goTestFunc says whether a stack frame's function is a test function or
// one of its closures: "example.com/x.TestParse.func1", not
// "example.com/x.assert" or "example.com/x.Testify".
func goTestFunc(fn string) bool {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		fn = fn[i+1:]
	}
	_, fn, ok := strings.Cut(fn, ".")
	if !ok || !strings.HasPrefix(fn, "Test") {
		return false
	}
	rest := strings.TrimPrefix(fn, "Test")
	return rest == "" || rest[0] == '.' || !(rest[0] >= 'a' && rest[0] <= 'z')
}
