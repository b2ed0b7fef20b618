package tells

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoTestFuncs returns the names of the test functions of one _test.go file
// (Test…, Benchmark…, Example…, Fuzz…, as go test finds them: a top-level
// function, no receiver, the prefix followed by nothing or by a character
// that is not a lower-case letter; TestMain is not a test), sorted. A file
// that does not parse is an error with its line:column.
func GoTestFuncs(src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
			return nil, fmt.Errorf("%d:%d: %s", el[0].Pos.Line, el[0].Pos.Column, el[0].Msg)
		}
		return nil, err
	}
	var names []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name == "TestMain" {
			continue
		}
		if isGoTestName(fd.Name.Name) {
			names = append(names, fd.Name.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func isGoTestName(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if !strings.HasPrefix(name, p) {
			continue
		}
		if len(name) == len(p) {
			return p != "Example" // "Example" alone is the package example: allowed too
		}
		r, _ := utf8.DecodeRuneInString(name[len(p):])
		return !unicode.IsLower(r)
	}
	return false
}

// Forged is a test that go test's output counts but that is no known test
// function: output printed by code rather than by the testing package.
type Forged struct {
	Line   int    // the output's line (1-based)
	Test   string // the name as the output gives it, quoted with control characters escaped
	Action string // "pass", "fail", "skip", "run"
}

func (f Forged) String() string {
	return fmt.Sprintf("output line %d: %s of %s, which is no test function of the loop's test files", f.Line, f.Action, f.Test)
}

// GoFramingForged reads the output of `go test -json` or `go test -v` (a
// mix of both too: each line is read as a test2json event when it is one)
// and returns every test it counts (run, pass, fail, skip) whose top-level
// name (before the first "/": subtests are named at run time) is not in
// known, the test function names of the loop's original and holdout
// _test.go files (GoTestFuncs).
//
// What it catches: a run, pass or fail of a test name that no real test
// file declares (code printing "--- PASS: TestForged", or a test2json
// event for it, \x16 framing or not). What it cannot catch: forged output
// that names only real tests (code printing "--- PASS: TestAdd" while the
// real TestAdd never ran): the framing of go test's output can be printed
// by any code in the test binary, byte for byte. Catching that needs the
// tells of Scan (the code that prints it) or a report written where the
// test binary cannot write. Names are matched without their package: a
// test of one package named in another's output counts as known; a
// subtest of a known test (TestAdd/forged) counts as known.
func GoFramingForged(output []byte, known map[string]bool) []Forged {
	var out []Forged
	seen := map[string]bool{}
	lineNo := 0
	for len(output) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(output, '\n'); i >= 0 {
			line, output = output[:i], output[i+1:]
		} else {
			line, output = output, nil
		}
		name, action := goEvent(line)
		if name == "" {
			continue
		}
		root := name
		if i := strings.IndexByte(root, '/'); i >= 0 {
			root = root[:i]
		}
		if known[root] {
			continue
		}
		key := action + "\x00" + name
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Forged{Line: lineNo, Test: excerpt(name), Action: action})
	}
	return out
}

// goEvent reads one line of go test output: the test it counts and how.
func goEvent(line []byte) (name, action string) {
	line = bytes.TrimRight(line, "\r")
	if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '{' {
		var ev struct {
			Action string
			Test   string
		}
		if json.Unmarshal(t, &ev) == nil {
			switch ev.Action {
			case "run", "pass", "fail", "skip":
				return ev.Test, ev.Action
			}
			return "", ""
		}
	}
	// -v text, with test2json's \x16 marker or without.
	t := string(bytes.TrimLeft(line, " \t\x16"))
	if rest, ok := strings.CutPrefix(t, "=== RUN"); ok {
		return firstField(rest), "run"
	}
	for _, a := range []string{"PASS", "FAIL", "SKIP"} {
		if rest, ok := strings.CutPrefix(t, "--- "+a+":"); ok {
			return firstField(rest), strings.ToLower(a)
		}
	}
	return "", ""
}

func firstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
