package doctor

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/guard"
)

// A protected file the objective or a failing test names is warned of, by
// its path or its own name; test files, test data, the loop file and
// names inside longer names are not.
func TestNamedProtected(t *testing.T) {
	ps := []guard.Protected{
		{Path: "internal/check/check.go", Rule: "go test support"},
		{Path: "opt/x_test.go", Rule: "go test files"},
		{Path: "testdata/in.txt", Rule: "go test data"},
		{Path: "loop.yaml", Rule: "the loop file"},
		{Path: "a/util.py", Rule: "r1"},
		{Path: "b/util.py", Rule: "r2"},
		{Path: "src/conf.js", Rule: "r3"},
	}
	cases := []struct {
		text string
		want []string
	}{
		{"fix internal/check/check.go", []string{"internal/check/check.go"}},
		{"panic at check.go:12", []string{"internal/check/check.go"}},
		{"opt/x_test.go:3 testdata/in.txt loop.yaml", nil},
		{"util.py is wrong", nil}, // two protected files share the name
		{"see mycheck.go and check.golang and xinternal/check/check.go", nil},
		{"src/conf.js, then b/util.py", []string{"b/util.py", "src/conf.js"}},
		{"", nil},
	}
	for _, c := range cases {
		got := NamedProtected(ps, "the objective", c.text)
		if len(got) != len(c.want) {
			t.Errorf("%q: %q, want %v", c.text, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], "the objective names "+w+", which the agent may not change (") || !strings.Contains(got[i], `protect_except: ["`+w+`"]`) {
				t.Errorf("%q: %q, want it to name %s", c.text, got[i], w)
			}
		}
	}
}
