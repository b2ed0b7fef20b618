package spec

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/netproxy"
	"gopkg.in/yaml.v3"
)

// ChecksNetwork is the loop file's `checks.network`: `none` (the
// default: a loopback of the check's own), `host` (the host's network,
// with a warning), or a mapping `{allow: [host:port, …]}`: the checks
// reach those only, through a proxy of the judge's own whose every
// connection is a record (a registry for `setup`, a database on the
// host's loopback for integration tests).
type ChecksNetwork struct {
	Mode  string   `yaml:"mode"`
	Allow []string `yaml:"allow"`
}

// UnmarshalYAML reads `network: none`, `network: host` or the mapping.
func (n *ChecksNetwork) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = ChecksNetwork{Mode: strings.ToLower(v.Value)}
		return nil
	}
	type plain ChecksNetwork
	var p plain
	if err := v.Decode(&p); err != nil {
		return err
	}
	*n = ChecksNetwork(p)
	if n.Mode == "" {
		n.Mode = ChecksNetworkAllow
	}
	n.Mode = strings.ToLower(n.Mode)
	return nil
}

// validateChecksNetwork checks checks.network.
func (l *Loop) validateChecksNetwork(at func(path, format string, args ...any)) {
	n := l.Checks.Network
	switch n.Mode {
	case ChecksNetworkNone, ChecksNetworkHost:
		if len(n.Allow) > 0 {
			at("checks.network.allow", "checks.network.allow: an allowlist goes with mode allow (write `network: {allow: [...]}`), not %s", n.Mode)
		}
	case ChecksNetworkAllow:
	default:
		at("checks.network", "checks.network: %q is not known (none or host), or a mapping {allow: [host:port, ...]}: none gives every check a network of its own with only loopback; host lets checks reach the host's network and its services; allow lets them reach the hosts named, through the judge's proxy", n.Mode)
	}
	for i, h := range n.Allow {
		if _, err := netproxy.ParseAllow([]string{h}); err != nil {
			at(fmt.Sprintf("checks.network.allow[%d]", i), "checks.network.allow[%d]: %v", i, err)
		}
	}
}
