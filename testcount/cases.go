package testcount

import (
	"regexp"
	"strings"
)

// jsCaseValue is what a JS runner's each/table test puts in its title: a
// number or a quoted string.
var jsCaseValue = regexp.MustCompile("-?\\d+(?:\\.\\d+)?|'[^']*'|\"[^\"]*\"|`[^`]*`")

// jsTitleSep joins a JS runner's file, describe blocks and test title in
// the names it prints.
var jsTitleSep = map[string]string{"jest": " › ", "vitest": " > "}

// CaseOf says which parametrized test a failing test is a case of: its
// family (the test's name without the case) and the case's id, ok false
// for a test that is no case of another. A pytest id
// ("tests/test_x.py::test_add[1-2]": test_add, "1-2"), a Go subtest
// ("pkg.TestParse/empty/x": pkg.TestParse, "empty/x"), a unittest subtest
// ("mod.Class.test_x (i=1)": mod.Class.test_x, "i=1"), and the titles of a
// JS each/table test, which differ only in the numbers and quoted strings
// put in them ("math › adds 1 + 2": "math › adds # + #", the test's own
// title "adds 1 + 2" its id).
func CaseOf(f Failure) (family, id string, ok bool) {
	name := f.Name
	switch f.Runner {
	case "pytest":
		start := strings.LastIndex(name, "::")
		i := strings.IndexByte(name[start+1:], '[')
		if start < 0 || i < 0 || !strings.HasSuffix(name, "]") {
			return "", "", false
		}
		i += start + 1
		return name[:i], name[i+1 : len(name)-1], true
	case "go", "go-json":
		i := strings.Index(name, ".Test")
		if i < 0 {
			i = 0
		} else {
			i++
		}
		j := strings.IndexByte(name[i:], '/')
		if j <= 0 || i+j+1 == len(name) {
			return "", "", false
		}
		return name[:i+j], name[i+j+1:], true
	case "unittest":
		i := strings.Index(name, " (")
		if i <= 0 || !strings.HasSuffix(name, ")") {
			return "", "", false
		}
		return name[:i], name[i+2 : len(name)-1], true
	case "jest", "vitest", "mocha", "tap":
		fam := jsCaseValue.ReplaceAllString(name, "#")
		if fam == name {
			return "", "", false
		}
		// The id is the case's own title: jest and vitest put the file and
		// the describe blocks before it (" › ", " > "), the same in every
		// case, and would leave room for few ids.
		id := name
		if sep, ok := jsTitleSep[f.Runner]; ok {
			if i := strings.LastIndex(name, sep); i >= 0 && i+len(sep) < len(name) {
				id = name[i+len(sep):]
			}
		}
		return fam, id, true
	}
	return "", "", false
}
