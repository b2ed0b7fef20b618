package spec

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Source is the loop file's `source:`: where a plain `looprinter run`
// takes its work from. With source.github, a run without --issue takes
// the oldest open issue of forge.github.repo with the label (as `run
// --next-issue` does), and the issue, fenced as untrusted text, is its
// objective (after the loop file's objective, when it has one).
type Source struct {
	GitHub GitHubSource `yaml:"github"`
}

// GitHubSource is `source.github`: the label of the issues the loop
// works on.
type GitHubSource struct {
	Label string `yaml:"label"`
}

// On says whether the loop file names a source (a valid one has a
// label).
func (s Source) On() bool { return s.GitHub.Label != "" }

// IssueLabel is the label of the issues a run without --issue takes
// (source.github.label), or "" without a source.
func (s Source) IssueLabel() string { return s.GitHub.Label }

// validLabel says whether s is a label's name as the loop file may
// write it.
func validLabel(s string) bool {
	return s != "" && strings.TrimSpace(s) == s && len(s) <= 50 && !strings.ContainsAny(s, "\n\r")
}

// validateSource checks source:.
func (l *Loop) validateSource(nodes map[string]*yaml.Node, at func(path, format string, args ...any)) {
	if _, set := nodes["source"]; !set {
		return
	}
	g := l.Source.GitHub
	if n, set := nodes["source.github"]; !set || n.Tag == "!!null" {
		at("source", "source: name where the work comes from: source: {github: {label: looprinter}}")
		return
	}
	if !validLabel(g.Label) {
		at("source.github.label", "source.github.label: %q: want the name of the label the loop's issues carry (no spaces around it, at most 50 characters), e.g. looprinter", g.Label)
	}
	if _, forge := nodes["forge.github"]; !forge {
		at("source.github", "source.github: the issues of which repository? add forge.github.repo")
	}
}
