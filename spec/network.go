package spec

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/netproxy"
	"gopkg.in/yaml.v3"
)

// Network modes.
const (
	NetworkAllow = "allow" // the default: the backend's model API hosts, and Allow
	NetworkOpen  = "open"  // the host's network, unconfined
	NetworkOff   = "off"   // loopback only, no proxy
)

// Network is the loop file's `network:`: `open`, `off`, or a mapping
// `{allow: [host, host:port, *.suffix, …]}` that adds hosts to the
// backend's model API hosts, which are allowed by default.
type Network struct {
	Mode  string   `yaml:"mode"`
	Allow []string `yaml:"allow"`
}

// UnmarshalYAML reads `network: open`, `network: off` or the mapping.
func (n *Network) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = Network{Mode: strings.ToLower(v.Value)}
		return nil
	}
	type plain Network
	var p plain
	if err := v.Decode(&p); err != nil {
		return err
	}
	*n = Network(p)
	if n.Mode == "" {
		n.Mode = NetworkAllow
	}
	n.Mode = strings.ToLower(n.Mode)
	return nil
}

// SandboxOpts is the mapping form of `sandbox:`: `{mode: bwrap, deny_read:
// [paths], allow_read: [paths]}`; `sandbox: bwrap` is the same as the mode
// alone.
type SandboxOpts struct {
	Mode string `yaml:"mode"`
	// DenyRead are more paths the agent may not read (masked in its
	// sandbox, like the credential paths); ~ is the user's home.
	DenyRead []string `yaml:"deny_read"`
	// AllowRead are masked paths let through (a credential folder the
	// agent needs).
	// Also: more paths shown read-only in the view of every agent run and
	// check, which is otherwise built from the system, the toolchains and
	// the loop's own folders.
	AllowRead []string `yaml:"allow_read"`
	// AllowSockets are unix sockets of the host let into the view (a
	// database the tests need); validate warns about each.
	AllowSockets []string `yaml:"allow_sockets"`
}

// UnmarshalYAML reads `sandbox: MODE` or the mapping.
func (s *SandboxOpts) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*s = SandboxOpts{Mode: v.Value}
		return nil
	}
	type plain SandboxOpts
	var p plain
	if err := v.Decode(&p); err != nil {
		return err
	}
	*s = SandboxOpts(p)
	return nil
}

// validateNetwork checks network: and sandbox's read lists.
func (l *Loop) validateNetwork(at func(path, format string, args ...any)) {
	switch l.Network.Mode {
	case NetworkAllow, NetworkOpen, NetworkOff:
	default:
		at("network", "network: %q is not known: write open, off, or a mapping `allow: [hosts]` (the backend's model API hosts are allowed by default)", l.Network.Mode)
	}
	for i, h := range l.Network.Allow {
		if _, err := netproxy.ParseAllow([]string{h}); err != nil {
			at(fmt.Sprintf("network.allow[%d]", i), "network.allow[%d]: %v", i, err)
		}
	}
	for key, list := range map[string][]string{"sandbox.deny_read": l.SandboxOpts.DenyRead, "sandbox.allow_read": l.SandboxOpts.AllowRead, "sandbox.allow_sockets": l.SandboxOpts.AllowSockets} {
		for i, p := range list {
			if p = strings.TrimSpace(p); p == "" || !(strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/")) {
				at(fmt.Sprintf("%s[%d]", key, i), "%s[%d]: %q is not an absolute path or a path under ~", key, i, list[i])
			}
		}
	}
}
