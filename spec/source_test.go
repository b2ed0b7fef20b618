package spec

import (
	"strings"
	"testing"
)

func TestSourceValid(t *testing.T) {
	l, err := Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b}}\nsource: {github: {label: looprinter}}\n"), "/l/loop.yaml")
	if err != nil || !l.Source.On() || l.Source.IssueLabel() != "looprinter" {
		t.Fatalf("%+v %v", l.Source, err)
	}
	l, err = Parse([]byte("objective: x\nverify: [true]\nforge: {github: {repo: a/b}}\n"), "/l/loop.yaml")
	if err != nil || l.Source.On() || l.Source.IssueLabel() != "" {
		t.Fatalf("no source: %+v %v", l.Source, err)
	}
}

func TestSourceBadInput(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"forge: {github: {repo: a/b}}\nsource: {github: {}}\n", `loop.yaml:4:18: source.github.label: "": want the name of the label`},
		{"forge: {github: {repo: a/b}}\nsource: {github: {label: ' x'}}\n", `loop.yaml:4:26: source.github.label: " x": want the name of the label`},
		{"forge: {github: {repo: a/b}}\nsource: {github: {label: " + strings.Repeat("l", 51) + "}}\n", `source.github.label: "lllll`},
		{"forge: {github: {repo: a/b}}\nsource: {}\n", `loop.yaml:4:9: source: name where the work comes from`},
		{"forge: {github: {repo: a/b}}\nsource: {github: }\n", `loop.yaml:4:9: source: name where the work comes from`},
		{"forge: {github: {repo: a/b}}\nsource: github\n", `source: want a mapping of fields`},
		{"forge: {github: {repo: a/b}}\nsource: {gitlab: {label: x}}\n", `unknown field "gitlab" in source`},
		{"forge: {github: {repo: a/b}}\nsource: {github: {label: x, query: y}}\n", `unknown field "query" in source.github`},
		{"source: {github: {label: looprinter}}\n", `loop.yaml:3:18: source.github: the issues of which repository? add forge.github.repo`},
	} {
		_, err := Parse([]byte("objective: x\nverify: [true]\n"+c.yaml), "/l/loop.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// A run may not change where its work comes from.
func TestSourceJudgeRefuses(t *testing.T) {
	if _, ok := judgeRules["source.github.label"]; !ok {
		t.Fatal("source.github.label has no judge rule")
	}
}

func init() {
	judgeCases = append(judgeCases, judgeCase{"source.github.label", "another label's issues become the work", func(l *Loop) { l.Source.GitHub.Label = "anyone" }, false, nil})
}
