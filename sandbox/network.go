package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Network confines an agent run's network. Under bwrap the run gets a
// network namespace of its own (loopback only); when Socket is set, a relay
// in the layer helper listens on 127.0.0.1:Port inside that namespace and
// carries every connection to the loop's proxy on Socket, and the run's
// environment names the relay as its proxy. Under landlock (ABI 4 or later)
// the run may connect over TCP to Port only, where the proxy itself listens
// on the host's 127.0.0.1; UDP is not covered and a kernel without ABI 4
// leaves the network open (NetworkEnforced says which).
type Network struct {
	Socket string `json:"socket,omitempty"` // the proxy's unix socket (bwrap); empty: no way out
	Port   int    `json:"port,omitempty"`   // the relay's port (bwrap) or the proxy's (landlock); 0: none
}

// Env is the proxy environment of a run: HTTP_PROXY, HTTPS_PROXY and
// ALL_PROXY (and their lower-case forms) name 127.0.0.1:Port; NO_PROXY is
// empty, so nothing bypasses the proxy (the loopback has nothing else
// anyway). Nothing when there is no proxy.
func (n *Network) Env() []string {
	if n == nil || n.Port == 0 {
		return nil
	}
	hp := "127.0.0.1:" + strconv.Itoa(n.Port)
	var out []string
	for _, kv := range [][2]string{
		{"HTTP_PROXY", "http://" + hp}, {"HTTPS_PROXY", "http://" + hp}, {"ALL_PROXY", "socks5h://" + hp}, {"NO_PROXY", ""},
	} {
		out = append(out, kv[0]+"="+kv[1])
		out = append(out, lower(kv[0])+"="+kv[1])
	}
	return out
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Credentials are the usual credential paths under home, masked in every
// agent's sandbox: SSH, cloud and cluster logins, container registries,
// netrc and git's stored credentials, GnuPG and pass, browsers' profiles,
// the GitHub CLI.
func Credentials(home string) []string {
	rel := []string{
		".ssh", ".aws", ".config/gcloud", ".azure", ".kube", ".docker/config.json",
		".netrc", ".git-credentials", ".gnupg", ".password-store",
		".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
		".config/gh", ".config/hub", ".npmrc", ".pypirc", ".cargo/credentials.toml", ".cargo/credentials",
		".config/op", ".vault-token",
	}
	out := make([]string, 0, len(rel))
	for _, r := range rel {
		out = append(out, filepath.Join(home, filepath.FromSlash(r)))
	}
	return out
}

// maskArgs are bubblewrap's arguments that mask each existing path of
// masked: a folder becomes an empty tmpfs, anything else an empty file
// (/dev/null bound read-only over it).
func maskArgs(masked []string) []string {
	var a []string
	for _, m := range existing(masked) {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			a = append(a, "--tmpfs", m)
		} else {
			a = append(a, "--ro-bind", "/dev/null", m)
		}
	}
	return a
}

// NetworkEnforced says what kind does to an agent run's network when the
// loop confines it (for doctor, validate and the reports), and whether the
// network is in fact confined.
func NetworkEnforced(kind string) (string, bool) {
	switch kind {
	case Bwrap:
		return "bwrap: a network namespace of its own per run (loopback only; the host's loopback and every other address unreachable); TCP leaves only through the loop's proxy (HTTP CONNECT, HTTP, SOCKS5) to the hosts it allows; no UDP, no DNS of its own (the proxy resolves names); credential paths masked", true
	case Landlock:
		if err := landlockProbe(); err == nil && landlockOnce.abi >= 4 {
			return fmt.Sprintf("landlock (ABI %d): TCP connect only to the proxy's port (on any address: Landlock filters by port, not by address); UDP and DNS are not covered; credential paths are NOT masked (Landlock cannot hide a path inside a readable tree)", landlockOnce.abi), true
		}
		return "landlock: the kernel has no Landlock network rules (ABI 4, Linux 6.7): the network is OPEN to agents; credential paths are NOT masked", false
	case Seatbelt:
		return "seatbelt: the network is OPEN to agents (not yet confined on macOS)", false
	}
	return "off: the network is OPEN to agents", false
}
