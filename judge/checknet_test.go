package judge

import (
	"strings"
	"testing"

	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// An allowlist is a box without the network, for its setups too; none and
// host are as before. Where no bubblewrap box holds the relay, the
// allowlist is not in force, and the reason says so.
func TestChecksNetworkBox(t *testing.T) {
	for _, c := range []struct{ mode, net, setup string }{
		{spec.ChecksNetworkAllow, sandbox.CheckNetworkNone, sandbox.CheckNetworkNone},
		{spec.ChecksNetworkNone, sandbox.CheckNetworkNone, ""},
		{spec.ChecksNetworkHost, sandbox.CheckNetworkHost, ""},
		{"", sandbox.CheckNetworkNone, ""},
	} {
		l := &spec.Loop{Checks: spec.Checks{Network: spec.ChecksNetworkMode(c.mode)}}
		if n, s := boxNetworks(l); n != c.net || s != c.setup {
			t.Errorf("%q: box %q setup %q", c.mode, n, s)
		}
	}
	l := &spec.Loop{Dir: t.TempDir(), Checks: spec.Checks{Network: spec.ChecksNetworkAllow, NetworkAllow: []string{"127.0.0.1:1"}}}
	for kind, want := range map[string]string{sandbox.Landlock: "no network at all", sandbox.Off: "not enforced"} {
		proxy, why, err := checksProxy(&CheckRequest{Loop: l}, kind)
		if err != nil || proxy != nil || !strings.Contains(why, want) {
			t.Errorf("%s: %v %q %v", kind, proxy != nil, why, err)
		}
	}
	l.Checks.Network = spec.ChecksNetworkNone
	if proxy, why, err := checksProxy(&CheckRequest{Loop: l}, sandbox.Bwrap); proxy != nil || why != "" || err != nil {
		t.Errorf("none: %v %q %v", proxy != nil, why, err)
	}
	CloseChecksNetwork(l.Dir) // none started: nothing to close
}
