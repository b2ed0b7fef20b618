package tells

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

var pyEnvNames = map[string]bool{"PYTEST_CURRENT_TEST": true, "PYTEST_XDIST_WORKER": true, "PYTEST_VERSION": true,
	"PYTEST_XDIST_TESTRUNUID": true, "_PYTEST_RAISE": true}

var pyFraming = regexp.MustCompile(`PASSED|FAILED \(|\d+ passed|test session starts|Ran \d+ tests?\b|\nOK\b|\.\.\. ok\b|^OK \(`)

// tokErr turns a tokenizer error into an Unreadable tell.
func tokErr(err error) []Tell {
	line, col := 1, 1
	var te *srctok.Error
	if errors.As(err, &te) {
		line, col = te.Line, te.Col
	}
	return []Tell{{Line: line, Column: col, Kind: Unreadable, What: excerpt(err.Error())}}
}

// tokTell is a tell at t; its excerpt runs from t to the end of t's line
// (to t's end where t spans lines).
func tokTell(src []byte, t srctok.Token, k Kind) Tell {
	end := t.End
	if nl := bytes.IndexByte(src[t.Off:t.End], '\n'); nl < 0 {
		if rest := bytes.IndexByte(src[t.End:], '\n'); rest >= 0 {
			end = t.End + rest
		} else {
			end = len(src)
		}
		if end-t.Off > maxExcerpt+1 {
			end = t.Off + maxExcerpt + 1 // excerpt cuts it and marks the cut
		}
	}
	return Tell{Line: t.Line, Column: t.Col, Kind: k, What: excerpt(strings.TrimRight(string(src[t.Off:end]), " \t\r"))}
}

// seq reports whether toks[i:] starts with the given texts.
func seq(toks []srctok.Token, i int, texts ...string) bool {
	if i+len(texts) > len(toks) {
		return false
	}
	for j, s := range texts {
		if toks[i+j].Kind == srctok.String || toks[i+j].Text != s {
			return false
		}
	}
	return true
}

func hasIdent(toks []srctok.Token, names ...string) bool {
	for _, t := range toks {
		if t.Kind == srctok.Ident {
			for _, n := range names {
				if t.Text == n {
					return true
				}
			}
		}
	}
	return false
}

func scanPython(path string, src []byte) []Tell {
	toks, err := srctok.Python(src)
	if err != nil {
		return tokErr(err)
	}
	// A package's __main__.py is a program's entry point: its top level
	// runs as a program, not on import.
	mainModule := filepath.Base(filepath.FromSlash(path)) == "__main__.py"
	var out []Tell
	start := 0
	for i, t := range toks {
		if t.Kind != srctok.Newline {
			continue
		}
		out = append(out, pyLine(src, toks[start:i], mainModule)...)
		start = i + 1
	}
	return append(out, pyContext(src, toks, mainModule)...)
}

func pyLine(src []byte, line []srctok.Token, mainModule bool) []Tell {
	if len(line) == 0 {
		return nil
	}
	var out []Tell
	asksCtx := false
	printing := false
	for i := range line {
		if seq(line, i, "sys", ".", "modules") || seq(line, i, "sys", ".", "argv") || seq(line, i, "sys", ".", "orig_argv") ||
			seq(line, i, "os", ".", "environ") || seq(line, i, "os", ".", "getenv") || seq(line, i, "inspect", ".") ||
			seq(line, i, "traceback", ".") || seq(line, i, "importlib", ".") {
			asksCtx = true
		}
		if seq(line, i, "print", "(") && (i == 0 || line[i-1].Text != ".") ||
			seq(line, i, "stdout", ".", "write") || seq(line, i, "stderr", ".", "write") {
			printing = true
		}
	}
	for i, t := range line {
		switch {
		case t.Kind == srctok.Ident && pyEnvNames[t.Text], t.Kind == srctok.String && (pyEnvNames[t.Value] || strings.HasPrefix(t.Value, "PYTEST_") && t.Value != "PYTEST_ADDOPTS"):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case t.Kind == srctok.String && asksCtx && isPyRunnerName(t.Value):
			out = append(out, tokTell(src, t, AsksIfUnderTest))
		case t.Kind == srctok.String && printing && pyFraming.MatchString(t.Value):
			out = append(out, tokTell(src, t, PrintsRunnerFraming))
		case seq(line, i, "os", ".", "_exit"):
			out = append(out, tokTell(src, t, ExitsEarly))
		}
	}
	first := line[0]
	if !mainModule && first.Indent == 0 && first.Kind == srctok.Ident && first.Text != "def" && first.Text != "class" && first.Text != "async" && !hasIdent(line, "__name__", "lambda") {
		for i, t := range line {
			if seq(line, i, "sys", ".", "exit") || (seq(line, i, "exit", "(") || seq(line, i, "quit", "(")) && (i == 0 || line[i-1].Text != ".") {
				out = append(out, tokTell(src, t, ExitsEarly))
			}
		}
	}
	// unittest.TestCase.assertEqual = … ; setattr(unittest.TestCase, …)
	if first.Kind == srctok.Ident && (first.Text == "unittest" || first.Text == "TestCase" || first.Text == "pytest" || first.Text == "_pytest") && len(line) > 1 && line[1].Text == "." {
		for _, t := range line {
			if t.Kind == srctok.Op && t.Depth == first.Depth && (t.Text == "=" || strings.HasSuffix(t.Text, "=") && t.Text != "==" && t.Text != "!=" && t.Text != "<=" && t.Text != ">=") {
				out = append(out, tokTell(src, first, PatchesTestFramework))
				break
			}
		}
	}
	for i := range line {
		if seq(line, i, "setattr", "(") && i+2 < len(line) && (line[i+2].Text == "unittest" || line[i+2].Text == "TestCase" || line[i+2].Text == "pytest") {
			out = append(out, tokTell(src, line[i], PatchesTestFramework))
		}
	}
	return out
}

func isPyRunnerName(v string) bool {
	v = strings.ToLower(v)
	return strings.Contains(v, "pytest") || strings.Contains(v, "py.test") || v == "unittest" || strings.HasPrefix(v, "unittest.")
}
