package judge

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Tests wherever they live: a Rust crate keeps its unit tests in a
// `#[cfg(test)] mod NAME { … }` inside the very source file a fix changes.
// The file stays the agent's to edit, but the test module's span is
// protected as a test file is: a change whose test modules' text differs
// from the file's before the run is refused (the file is kept as it was).
// A new file, or one that had no test module, has nothing to protect: the
// agent's own new tests are its own.

// rustTestMod finds the head of an inline test module: #[cfg(test)]
// followed (attributes and comments between allowed) by `mod NAME {`.
var rustTestMod = regexp.MustCompile(`#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\](?:\s|#\s*\[[^\]]*\]|//[^\n]*\n)*(?:pub(?:\([^)]*\))?\s+)?mod\s+[A-Za-z_][A-Za-z0-9_]*\s*\{`)

// InlineTestSpans are the inline test modules of a source file, as
// [start, end) byte offsets from the attribute to the closing brace (none
// for a file of another language).
func InlineTestSpans(rel string, src []byte) [][2]int {
	if path.Ext(rel) != ".rs" {
		return nil
	}
	var out [][2]int
	for _, m := range rustTestMod.FindAllIndex(src, -1) {
		if len(out) > 0 && m[0] < out[len(out)-1][1] {
			continue // inside the module before
		}
		end := rustBlockEnd(src, m[1]-1)
		out = append(out, [2]int{m[0], end})
	}
	return out
}

// rustBlockEnd is the offset past the brace that closes the one at open,
// skipping strings, chars and comments (len(src) when it never closes).
func rustBlockEnd(src []byte, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch c := src[i]; {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			nest := 0
			for ; i+1 < len(src); i++ {
				if src[i] == '/' && src[i+1] == '*' {
					nest++
					i++
				} else if src[i] == '*' && src[i+1] == '/' {
					nest--
					i++
					if nest == 0 {
						break
					}
				}
			}
		case c == 'r' && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '#') && (i == 0 || !isIdentByte(src[i-1])):
			j := i + 1
			hashes := 0
			for j < len(src) && src[j] == '#' {
				hashes++
				j++
			}
			if j >= len(src) || src[j] != '"' {
				continue
			}
			closer := "\"" + strings.Repeat("#", hashes)
			if k := strings.Index(string(src[j+1:]), closer); k >= 0 {
				i = j + 1 + k + len(closer) - 1
			} else {
				return len(src)
			}
		case c == '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '\'':
			// A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
			if i+2 < len(src) && src[i+1] == '\\' {
				if k := strings.IndexByte(string(src[i+2:min(len(src), i+14)]), '\''); k >= 0 {
					i += 2 + k
				}
			} else if i+2 < len(src) && src[i+2] == '\'' {
				i += 2
			}
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(src)
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// InlineTestsChanged says how cur changed the inline test modules old
// held ("" when it did not, or old held none): the whole text of each
// module is compared, in order; a Python file's doctest examples, each
// wherever it is (judge/doctests.go).
func InlineTestsChanged(rel string, old, cur []byte) string {
	if path.Ext(rel) == ".py" {
		return doctestsChanged(old, cur)
	}
	was := InlineTestSpans(rel, old)
	if len(was) == 0 {
		return ""
	}
	now := InlineTestSpans(rel, cur)
	for i, s := range was {
		line := 1 + strings.Count(string(old[:s[0]]), "\n")
		if i >= len(now) {
			return fmt.Sprintf("%d:1: edits_inline_tests: the test module that started here is gone (an inline test module is protected like a test file; the rest of the file is yours to edit)", line)
		}
		n := now[i]
		if string(old[s[0]:s[1]]) != string(cur[n[0]:n[1]]) {
			at := 1 + strings.Count(string(cur[:n[0]]), "\n")
			return fmt.Sprintf("%d:1: edits_inline_tests: the test module (lines %d-%d) changed (an inline test module is protected like a test file; the rest of the file is yours to edit)", at, at, at+strings.Count(string(cur[n[0]:n[1]]), "\n"))
		}
	}
	return ""
}
