package checkcmd

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// CompileError is an error a compiler reported in one file that no change
// to another file can fix: the file does not parse, or declares what it
// never uses. In a file the agent may not change (a protected test file)
// it stops the tests from building whatever the agent does.
type CompileError struct {
	File      string // as the compiler printed it, relative to the check's folder
	Line, Col int
	Msg       string
}

func (c CompileError) String() string {
	return c.File + ":" + strconv.Itoa(c.Line) + ":" + strconv.Itoa(c.Col) + ": " + c.Msg
}

var (
	// go vet and go test: "./x_test.go:3:28: declared and not used: x".
	goFileError = regexp.MustCompile(`(?m)^((?:\.{0,2}/)?[^\s:]+\.go):(\d+):(\d+): (.+)$`)
	// rustc: "error: this file contains an unclosed delimiter" then
	// " --> tests/lib.rs:3:35". A coded error (error[E0425]) is a type
	// error, which code elsewhere may fix.
	rustFileError = regexp.MustCompile(`(?m)^error: (.+)\n\s*--> ([^\s:]+\.rs):(\d+):(\d+)\s*$`)
)

// goLocal are go's errors that only the file itself can fix.
var goLocal = []string{"syntax error", "imported and not used", "declared and not used", "declared but not used",
	"newline in string", "string literal not terminated", "raw string literal not terminated", "illegal character",
	"invalid character", "missing return", "defined and not used", "rune literal not terminated", "comment not terminated"}

// rustLocal are rustc's parse errors (the file cannot be read as Rust).
var rustLocal = []string{"expected ", "this file contains an unclosed delimiter", "unexpected closing delimiter",
	"mismatched closing delimiter", "unknown start of token", "unterminated ", "missing `", "non-item in item list",
	"unexpected token", "prefix `"}

// LocalCompileErrors lists the errors in a failed check's output that the
// Go or Rust compiler reported in one file and that only a change to that
// file can fix (a syntax error, an unused import or variable), at most 20,
// in the order printed. A type error (`undefined: Parse`, `error[E0425]`)
// is not listed: writing the code the tests call fixes it.
func LocalCompileErrors(output string, exit int) []CompileError {
	if exit == 0 {
		return nil
	}
	if len(output) > 1<<20 {
		output = output[:1<<20]
	}
	output = ansiEscape.ReplaceAllString(output, "")
	var out []CompileError
	add := func(file, line, col, msg string, local bool) {
		if len(out) >= 20 || !local {
			return
		}
		l, _ := strconv.Atoi(line)
		c, _ := strconv.Atoi(col)
		out = append(out, CompileError{File: path.Clean(file), Line: l, Col: c, Msg: strings.TrimSpace(msg)})
	}
	for _, m := range goFileError.FindAllStringSubmatch(output, 200) {
		// "expected" opens go's parse errors ("expected operand, found
		// '}'"); the others say what they are anywhere in the line
		// ("\"os\" imported and not used").
		add(m[1], m[2], m[3], m[4], strings.HasPrefix(m[4], "expected ") || containsAny(m[4], goLocal))
	}
	for _, m := range rustFileError.FindAllStringSubmatch(output, 200) {
		add(m[2], m[3], m[4], m[1], hasPrefixAny(m[1], rustLocal))
	}
	return out
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
