package guard

import (
	"regexp"
	"strings"
)

// ruleReasons say why each default rule protects what it protects: the
// reason a user reads beside the rule (init, validate), to judge whether
// a file it keeps from the agent is one the fix needs.
var ruleReasons = map[string]string{
	"go-tests":              "the tests judge the work: an edited test can make a wrong fix pass (new test files may be added)",
	"go-testdata":           "what the tests compare against: an edit changes what they expect",
	"go-test-config":        "go.mod's go, toolchain, godebug and replace lines change what the tests build with (other edits, a new dependency, stand)",
	"go-vendor":             "the build compiles the vendored sources instead of the modules go.mod names",
	"go-test-support":       "a package only tests import is part of the tests (their helpers); one with _test.go files of its own, or outside internal/ with exported API, is product code and not protected",
	"go-test-data-read":     "a file the tests read by name is what they compare against",
	"python-tests":          "the tests judge the work: an edited test can make a wrong fix pass (new test files may be added; helpers under tests/ are part of the tests)",
	"python-test-config":    "conftest.py, pytest.ini, tox.ini, the pytest sections of pyproject.toml and setup.cfg, sitecustomize.py and .pth files decide which tests run and how, and can rewrite their results (edits outside the pytest sections stand)",
	"python-shadow":         "a new module named like one a check runs with `python -m` would run instead of it",
	"js-tests":              "the tests judge the work: an edited test can make a wrong fix pass (new test files may be added; helpers under test/ and __tests__/ are part of the tests)",
	"js-test-config":        "the runners' configuration and package.json's scripts decide which tests run and how (package.json edits outside its scripts and the runners' keys stand)",
	"rust-tests":            "the integration tests (and their helpers under tests/) judge the work; inline #[cfg(test)] modules are judged by their span, not by this rule",
	"rust-test-config":      ".cargo/config changes how cargo builds and runs the tests",
	"js-test-snapshots":     "what a snapshot test compares against: an edited snapshot makes a wrong output pass (a new snapshot may be added)",
	"python-test-snapshots": "what a snapshot test compares against: an edited snapshot makes a wrong output pass (a new snapshot may be added)",
	"go-test-snapshots":     "what a snapshot test compares against: an edited snapshot makes a wrong output pass (a new snapshot may be added)",
	"rust-test-snapshots":   "what a snapshot test compares against: an edited snapshot makes a wrong output pass (a new snapshot may be added)",
	"test-data-read":        "a data file the tests read by name is what they compare against",
	"rust-build-config":     "Cargo.toml's [profile.*], [patch.*] and [replace] tables change what the tests build (other edits, a dependency, stand)",
}

var defaultRuleID = regexp.MustCompile(`\(default rule ([a-z-]+)\)$`)

// RuleReason says why a rule (a Protected's Rule) protects its files, ""
// for a rule without a known reason.
func RuleReason(rule string) string {
	switch {
	case rule == ruleLoopFile:
		return "the loop's own rules are never the agent's to change"
	case strings.HasPrefix(rule, "protect["):
		return "your loop file's protect glob names it"
	case strings.HasPrefix(rule, "gate program"):
		return "a check runs it: an edit would change the verdict, not the work"
	}
	if m := defaultRuleID.FindStringSubmatch(rule); m != nil {
		return ruleReasons[m[1]]
	}
	return ""
}
