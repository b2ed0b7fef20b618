package tells

import (
	"regexp"
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

var jsEnvNames = map[string]bool{"JEST_WORKER_ID": true, "NODE_TEST_CONTEXT": true, "VITEST": true, "VITEST_WORKER_ID": true,
	"VITEST_POOL_ID": true, "VITEST_MODE": true, "__vitest_worker__": true, "__vitest_environment__": true, "MOCHA_WORKER_ID": true}

var jsTestGlobals = map[string]bool{"jest": true, "describe": true, "it": true, "expect": true, "vi": true, "test": true,
	"mocha": true, "jasmine": true, "beforeAll": true, "afterAll": true, "beforeEach": true, "afterEach": true}

var jsFraming = regexp.MustCompile(`(^|\n)\s*(not )?ok \d+|TAP version|(^|\n)# (pass|fail|tests|suites)\b|(^|\n)1\.\.\d+|(^|\n)\s*PASS\s|Tests:\s+\d+ passed`)

var jsRunnerArg = regexp.MustCompile(`jest|vitest|mocha|^--test|node:test|jasmine|\bava\b`)

func scanJS(src []byte) []Tell {
	toks, err := srctok.JS(src)
	if err != nil {
		return tokErr(err)
	}
	var out []Tell
	for i, t := range toks {
		switch {
		case t.Kind == srctok.Ident && jsEnvNames[t.Text],
			t.Kind == srctok.String && !t.Regexp && (jsEnvNames[t.Value] || strings.HasPrefix(t.Value, "JEST_") || strings.HasPrefix(t.Value, "VITEST") || strings.HasPrefix(t.Value, "NODE_TEST")):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case seq(toks, i, "import", ".", "meta", ".", "vitest"):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case t.Text == "typeof" && t.Kind == srctok.Ident && i+1 < len(toks) && toks[i+1].Kind == srctok.Ident && jsTestGlobals[toks[i+1].Text]:
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case (t.Kind == srctok.Ident && t.Text == "NODE_ENV" || t.Kind == srctok.String && t.Value == "NODE_ENV") && stmtHas(toks, i, func(u srctok.Token) bool {
			return u.Kind == srctok.String && !u.Regexp && u.Value == "test"
		}):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case seq(toks, i, "process", ".", "argv") && stmtHas(toks, i, func(u srctok.Token) bool {
			return u.Kind == srctok.String && !u.Regexp && jsRunnerArg.MatchString(u.Value)
		}):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case (seq(toks, i, "process", ".", "exit", "(") || seq(toks, i, "process", ".", "reallyExit", "(") ||
			seq(toks, i, "process", ".", "abort", "(") || seq(toks, i, "process", ".", "kill", "(", "process", ".", "pid")) &&
			t.Depth == 0 && (i == 0 || toks[i-1].Text != ".") && !arrowBefore(toks, i) &&
			!stmtHasSeq(toks, i, "require", ".", "main") && !stmtHasSeq(toks, i, "meta", ".", "main"):
			out = append(out, tokTell(src, t, ExitsEarly))
		}
		if open := printCall(toks, i); open > 0 {
			for k := open + 1; k < len(toks) && toks[k].Depth > toks[open].Depth; k++ {
				if u := toks[k]; u.Kind == srctok.String && !u.Regexp && jsFraming.MatchString(u.Value) {
					out = append(out, tokTell(src, u, PrintsRunnerFraming))
				}
			}
		}
	}
	return append(out, jsContext(src, toks)...)
}

// printCall returns the index of the "(" of a printing call starting at
// toks[i] (console.log/info/warn/error/debug, process.stdout/stderr.write),
// or 0.
func printCall(toks []srctok.Token, i int) int {
	if i > 0 && toks[i-1].Text == "." {
		return 0
	}
	for _, m := range []string{"log", "info", "warn", "error", "debug"} {
		if seq(toks, i, "console", ".", m, "(") {
			return i + 3
		}
	}
	for _, s := range []string{"stdout", "stderr"} {
		if seq(toks, i, "process", ".", s, ".", "write", "(") {
			return i + 5
		}
	}
	return 0
}

// stmtHas reports whether a token of the statement around toks[i] (from
// the last ";", "{" or "}" before it to the next one after it) satisfies f.
func stmtHas(toks []srctok.Token, i int, f func(srctok.Token) bool) bool {
	isEnd := func(t srctok.Token) bool {
		return t.Kind == srctok.Op && (t.Text == ";" || t.Text == "{" || t.Text == "}")
	}
	for j := i; j >= 0 && j > i-stmtReach && (j == i || !isEnd(toks[j])); j-- {
		if f(toks[j]) {
			return true
		}
	}
	for j := i + 1; j < len(toks) && j < i+stmtReach && !isEnd(toks[j]); j++ {
		if f(toks[j]) {
			return true
		}
	}
	return false
}

// arrowBefore reports whether toks[i] is in the body of an arrow
// function without braces (const fail = () => process.exit(1)): code that
// runs when called, not on import.
func arrowBefore(toks []srctok.Token, i int) bool {
	for j := i - 1; j >= 0 && j > i-stmtReach; j-- {
		t := toks[j]
		if t.Kind == srctok.Op && (t.Text == ";" || t.Text == "{" || t.Text == "}") {
			return false
		}
		if t.Text == "=>" && t.Kind == srctok.Op {
			return true
		}
	}
	return false
}

// stmtReach bounds how far stmtHas looks each way, so that a file of one
// endless statement costs linear time.
const stmtReach = 64

// stmtHasSeq reports whether the statement around toks[i] holds the texts
// in a row.
func stmtHasSeq(toks []srctok.Token, i int, texts ...string) bool {
	found := false
	for j := max(0, i-stmtReach); j < len(toks) && j < i+stmtReach; j++ {
		if seq(toks, j, texts...) && sameStmt(toks, i, j) {
			found = true
			break
		}
	}
	return found
}

// sameStmt reports whether no ";", "{" or "}" lies between toks[i] and toks[j].
func sameStmt(toks []srctok.Token, i, j int) bool {
	a, b := min(i, j), max(i, j)
	for k := a + 1; k < b; k++ {
		if t := toks[k]; t.Kind == srctok.Op && (t.Text == ";" || t.Text == "{" || t.Text == "}") {
			return false
		}
	}
	return true
}
