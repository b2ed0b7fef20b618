package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// checks.network: {allow: [...]} is mode allow with its list; a bad entry
// and an unknown field are errors at their line and column.
func TestChecksNetworkAllow(t *testing.T) {
	l, err := Parse([]byte("objective: x\nchecks:\n  network: {allow: [\"127.0.0.1:5432\", \"registry.npmjs.org\"]}\n"), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := l.Checks; n.Network != ChecksNetworkAllow || !slices.Equal(n.NetworkAllow, []string{"127.0.0.1:5432", "registry.npmjs.org"}) {
		t.Errorf("parsed %+v", n)
	}
	for _, w := range l.Warnings() {
		if strings.Contains(w, "checks.network is host") {
			t.Errorf("allow warns as host: %s", w)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"objective: x\nchecks:\n  network:\n    allow: [\"bad host:x\"]\n", "4:13: checks.network.allow[0]"},
		{"objective: x\nchecks:\n  network:\n    alow: [a.example]\n", "4:5: unknown field \"alow\""},
		{"objective: x\nchecks:\n  network:\n    mode: host\n    allow: [a.example]\n", "5:12: checks.network.allow: an allowlist goes with mode allow"},
		{"objective: x\nchecks:\n  network:\n    mode: lan\n", "checks.network: \"lan\" is not known (none or host)"},
		{"objective: x\nchecks:\n  network_allow: [a.example]\n", "3:3: unknown field \"network_allow\""},
	} {
		_, err := Parse([]byte(c.src), "loop.yaml")
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
