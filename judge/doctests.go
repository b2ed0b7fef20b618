package judge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/spec"
)

// Python doctests a check runs are tests too: the examples of a module's
// docstrings (a `>>>` line, its `...` continuations and the expected
// output after it, up to a blank line or the docstring's end) are
// protected like a test file when a check runs doctests (RunsDoctests). A
// change that drops or alters an example the file held before the run is
// refused, the file kept as it was; the code around the examples, and new
// examples, stay the agent's to write.

// doctestConfigs are the project files whose pytest options may turn
// doctests on (--doctest-modules, --doctest-glob in addopts).
var doctestConfigs = []string{"pytest.ini", ".pytest.ini", "setup.cfg", "tox.ini", "pyproject.toml"}

// RunsDoctests says whether a check of l runs Python doctests: a check
// line that names doctest (python -m doctest, pytest --doctest-modules,
// xdoctest), or pytest's configuration at the top of dir that does.
func RunsDoctests(l *spec.Loop, dir string) bool {
	if l == nil {
		return false
	}
	for _, lines := range [][]string{l.Verify, l.ObjectiveVerify, l.HoldoutVerify} {
		for _, c := range lines {
			if strings.Contains(c, "doctest") {
				return true
			}
		}
	}
	for _, n := range doctestConfigs {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err == nil && bytes.Contains(b, []byte("--doctest")) {
			return true
		}
	}
	return false
}

// doctestSpans are the examples of a Python source, as [start, end) byte
// offsets of whole lines: from a line whose text starts with `>>>` to the
// last non-blank line before a blank one or a docstring's closing quotes.
func doctestSpans(src []byte) [][2]int {
	var out [][2]int
	start, in := 0, false
	off := 0
	for off < len(src) {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off + 1
		}
		text := strings.TrimSpace(string(src[off:end]))
		closes := strings.HasPrefix(text, `"""`) || strings.HasPrefix(text, `'''`)
		switch {
		case strings.HasPrefix(text, ">>>"):
			if !in {
				start, in = off, true
			}
		case in && (text == "" || closes):
			out = append(out, [2]int{start, off})
			in = false
		}
		off = end
	}
	if in {
		out = append(out, [2]int{start, len(src)})
	}
	return out
}

// doctestsChanged says which example of old cur no longer holds ("" when
// every one is still there, word for word, wherever it moved).
func doctestsChanged(old, cur []byte) string {
	now := map[string]int{}
	for _, s := range doctestSpans(cur) {
		now[string(cur[s[0]:s[1]])]++
	}
	for _, s := range doctestSpans(old) {
		text := string(old[s[0]:s[1]])
		if now[text] > 0 {
			now[text]--
			continue
		}
		line := 1 + bytes.Count(old[:s[0]], []byte("\n"))
		return fmt.Sprintf("%d:1: edits_inline_tests: the doctest example at lines %d-%d (before the run) is gone or changed (a doctest a check runs is protected like a test file; the rest of the file is yours to edit)",
			line, line, line+bytes.Count(old[s[0]:s[1]], []byte("\n"))-1)
	}
	return ""
}
