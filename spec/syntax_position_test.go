package spec

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Where a loop file that is not YAML is wrong: line and column (in
// characters) of the token the parser stopped at, with LF, CR LF or lone CR
// line ends; of an alias to no anchor (the first one, not a longer name
// that starts the same); of a byte that is not UTF-8 or a character YAML
// does not allow (NEL is allowed, C1 controls are control characters).
func TestSyntaxProblemPositions(t *testing.T) {
	cases := []struct {
		in        string
		line, col int
		msg       string
	}{
		{"a: [1, 2\n", 1, 5, "did not find expected ',' or ']'"},
		{"a: 1\r\nb: 2\r\nc: [\r\n", 3, 4, "did not find expected node content"},
		{"a: 1\rb: 2\rc: [\r", 3, 4, "did not find expected node content"},
		{"a: \"é\"\nb: \"éé\" x\n", 2, 9, "did not find expected key"},
		{"a:\n  b: 1\n c: 2\n", 3, 2, "did not find expected key"},
		{"a: *nope\n", 1, 4, "*nope refers to no anchor"},
		{"a: &x 1\nb: [*xy, *nope]\n", 2, 5, "*xy refers to no anchor"},
		{"a: &xy2 1\nb: [*xy2, *xy]\n", 2, 11, "*xy refers to no anchor"},
		{"a: 1\nb: \x01\n", 2, 4, "control character U+0001"},
		{"a: é\u0085x\nb: \u0090\n", 2, 4, "control character U+0090"},
		{"a: \ufffe\n", 1, 4, "the character U+FFFE"},
		{"a: é\xff\n", 1, 5, "byte 0xff here starts no character"},
	}
	for _, c := range cases {
		p, ok := badChar([]byte(c.in))
		if !ok {
			var n yaml.Node
			err := safeUnmarshal([]byte(c.in), &n)
			if err == nil {
				t.Fatalf("%q parsed", c.in)
			}
			p = syntaxProblem([]byte(c.in), err)
		}
		if p.Line != c.line || p.Column != c.col || !strings.Contains(p.Msg, c.msg) {
			t.Errorf("%q: %d:%d %s; want %d:%d and %q", c.in, p.Line, p.Column, p.Msg, c.line, c.col, c.msg)
		}
	}
}
