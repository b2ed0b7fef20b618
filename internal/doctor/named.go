package doctor

import (
	"fmt"
	"path"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/tells"
)

// NamedProtected warns of each protected file that text names (by its
// path, or by its name where no other protected file has it), save test
// files, test data and the loop file, which an objective or a failing
// test names as a matter of course: a file the objective or the failing
// test points at is likely the one the fix must change, and the agent may
// not. where says what named it ("the objective", "the failing test of
// `go test ./...`").
func NamedProtected(ps []guard.Protected, where, text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	bases := map[string]int{}
	for _, p := range ps {
		bases[path.Base(p.Path)]++
	}
	var out []string
	for _, p := range ps {
		if tells.IsTestFile(p.Path) && !(where == "the objective" && testSupport(p.Path)) || underTestdata(p.Path) || p.Rule == "the loop file" {
			continue
		}
		named := namesWord(text, p.Path)
		if b := path.Base(p.Path); !named && bases[b] == 1 && strings.Contains(b, ".") {
			named = namesWord(text, b)
		}
		if named {
			out = append(out, fmt.Sprintf("%s names %s, which the agent may not change (%s); if the fix belongs there, free it with protect_except: [%q]",
				where, p.Path, p.Rule, p.Path))
		}
	}
	return out
}

// testSupport says whether a test file is one the tests use rather than a
// test file itself: a conftest.py, a helper beside the tests (not named
// test_*, *_test.*, *.test.* or *.spec.*). The objective naming one says
// the fix may be there; a failing test's output names them as a matter of
// course.
func testSupport(p string) bool {
	b := path.Base(p)
	stem := strings.TrimSuffix(b, path.Ext(b))
	return !strings.HasPrefix(b, "test_") && !strings.HasSuffix(stem, "_test") && !strings.Contains(b, ".test.") && !strings.Contains(b, ".spec.")
}

func underTestdata(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "testdata" {
			return true
		}
	}
	return false
}

// namesWord says whether text holds name as a word of its own: not part
// of a longer name or path (a slash before it, or a letter either side).
func namesWord(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !nameChar(text[j-1])) && (end == len(text) || !wordChar(text[end])) {
			return true
		}
		i = j + 1
	}
}

func nameChar(c byte) bool { return wordChar(c) || c == '/' || c == '.' || c == '-' }

func wordChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ProtectedByRule says how many files each rule protects, most first, one
// a line: what init shows of the protection before the first run.
// Under each rule, why it protects them (guard.RuleReason).
func ProtectedByRule(ps []guard.Protected) []string {
	var out []string
	for _, line := range ruleCounts(ps) {
		out = append(out, line)
		if why := guard.RuleReason(strings.TrimLeft(line, " 0123456789")); why != "" {
			out = append(out, "         why: "+why)
		}
	}
	return out
}

// RuleReasons says why each rule that protects a file of ps protects it,
// one a line ("RULE: why"), in the order the rules first protect a file.
func RuleReasons(ps []guard.Protected) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if seen[p.Rule] {
			continue
		}
		seen[p.Rule] = true
		if why := guard.RuleReason(p.Rule); why != "" {
			out = append(out, p.Rule+": "+why)
		}
	}
	return out
}
