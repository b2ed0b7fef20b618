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

// ChecksNetworkMode is checks.network's mode (none, host or allow), kept
// in Checks.Network; its allowlist is Checks.NetworkAllow.
type ChecksNetworkMode string

// UnmarshalYAML reads `network: none` or `network: host`; the mapping is
// read by Checks' own UnmarshalYAML.
func (m *ChecksNetworkMode) UnmarshalYAML(v *yaml.Node) error {
	var s string
	if err := v.Decode(&s); err != nil {
		return err
	}
	*m = ChecksNetworkMode(strings.ToLower(s))
	return nil
}

// UnmarshalYAML reads checks:, with network as a mode or as the mapping
// `{mode, allow}` (ChecksNetwork); network_allow is not written by hand.
func (c *Checks) UnmarshalYAML(v *yaml.Node) error {
	type plain Checks
	rest := *v
	var netMap *yaml.Node
	if v.Kind == yaml.MappingNode {
		rest.Content = nil
		for i := 0; i+1 < len(v.Content); i += 2 {
			switch k, val := v.Content[i], v.Content[i+1]; {
			case k.Value == "network_allow":
				return fmt.Errorf("line %d: field network_allow not found in type spec.Checks (write network: {allow: [...]})", k.Line)
			case k.Value == "network" && val.Kind == yaml.MappingNode:
				netMap = val
			default:
				rest.Content = append(rest.Content, k, val)
			}
		}
	}
	var p plain
	if err := rest.Decode(&p); err != nil {
		return err
	}
	*c = Checks(p)
	if netMap != nil {
		var n ChecksNetwork
		if err := netMap.Decode(&n); err != nil {
			return err
		}
		if n.Mode == "" {
			n.Mode = ChecksNetworkAllow
		}
		c.Network, c.NetworkAllow = ChecksNetworkMode(strings.ToLower(n.Mode)), n.Allow
	}
	return nil
}

// validateChecksNetwork checks checks.network.
func (l *Loop) validateChecksNetwork(at func(path, format string, args ...any)) {
	n := ChecksNetwork{Mode: string(l.Checks.Network), Allow: l.Checks.NetworkAllow}
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
