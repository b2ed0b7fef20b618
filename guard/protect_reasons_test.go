package guard

import (
	"fmt"
	"strings"
	"testing"
)

// Every default rule has a reason a user can read, and the rules the
// engine writes without an id have theirs.
func TestRuleReason(t *testing.T) {
	ids := []string{"go-vendor", "go-test-support", "go-test-data-read", "python-shadow"}
	for _, dr := range defaultRules {
		ids = append(ids, dr.id)
	}
	for _, id := range ids {
		if RuleReason(fmt.Sprintf("what it protects (default rule %s)", id)) == "" {
			t.Errorf("%s: no reason", id)
		}
	}
	for rule, want := range map[string]string{
		ruleLoopFile:                          "never the agent's",
		`protect[0] "tests/**"`:               "protect glob",
		"gate program: `sh check.sh` runs it": "a check runs it",
		ruleGoVendor:                          "vendored sources",
		"(default rule nosuch)":               "",
		"something else":                      "",
	} {
		if got := RuleReason(rule); want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", rule, got, want)
		}
	}
}
