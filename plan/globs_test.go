package plan

import (
	"strings"
	"testing"
)

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"src/a.go", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{"src/", "src/a.go", true}, // a folder and everything in it
		{"src", "src/a.go", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/a.py", false},
		{"src/**", "src/x/y/z.go", true},
		{"**/*.go", "docs/a.md", false},
		{"**/*.go", "cmd/x/main.go", true},
		{"src/a*.go", "src/*b.go", true},
		{"src/a*.go", "src/b*.go", false},
		{"src/*.go", "src/*.py", false},
		{"src/[ab].go", "src/c.go", false},
		{"src/[ab].go", "src/b.go", true},
		{"lib/**/x.go", "lib/y.go", false},
		{"a/**/b/**/c", "a/q/b/r/s/c", true},
	}
	for _, c := range cases {
		if got := Overlap([]string{c.a}, []string{c.b}); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Overlap([]string{c.b}, []string{c.a}); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
	if Overlap(nil, []string{"**"}) {
		t.Error("a task that declares nothing overlaps")
	}
}

func TestGlobProblem(t *testing.T) {
	for _, g := range []string{"src/**/*.go", "a.txt", "docs/[a-z]*.md", "**", "src/api/"} {
		if why := GlobProblem(g); why != "" {
			t.Errorf("%q refused: %s", g, why)
		}
	}
	for g, want := range map[string]string{
		"":         "empty",
		"/etc/x":   "absolute",
		"../x":     "climbs out",
		"a//b":     "empty part",
		"a/**x/b":  "** stands alone",
		"src/[a-":  "not a valid pattern",
		"a\\b":     "backslash",
		"./a":      "empty part",
		"x/../../": "climbs out",
	} {
		if why := GlobProblem(g); !strings.Contains(why, want) {
			t.Errorf("%q: %q, want %q", g, why, want)
		}
	}
}
