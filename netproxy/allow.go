// Package netproxy is the agent's only way out: one proxy per loop that
// serves HTTP CONNECT, plain HTTP forwarding and SOCKS5 on one listener (a
// unix socket bound into the agent's sandbox, or a loopback TCP port under
// Landlock), lets through only the hosts of an allowlist, resolves names
// itself (the agent has no DNS of its own), and reports every connection it
// allowed or refused. A refused client gets a clear answer: HTTP 403 with a
// message naming the host and how to allow it, or SOCKS5's "connection not
// allowed by ruleset".
//
// Relay is the other half: inside the agent's network namespace (loopback
// only) it listens on 127.0.0.1 and carries each connection to the proxy's
// unix socket, so that HTTP_PROXY=http://127.0.0.1:PORT works for every
// program.
package netproxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// An Allowlist says which host:port pairs the proxy lets through.
type Allowlist struct {
	rules []rule
}

type rule struct {
	host   string // lower case; for a suffix rule, without the "*."
	port   int    // 0: any port
	suffix bool   // *.example.com: example.com's sub-domains, not example.com itself
	ip     bool   // the host is an IP literal, named as such
}

// ParseAllow reads allowlist entries: "host", "host:port", "*.suffix",
// "*.suffix:port", "[v6]:port" or an IP literal (an IP is allowed only when
// named as one). Names are compared without case and without a trailing dot.
func ParseAllow(entries []string) (Allowlist, error) {
	var a Allowlist
	for _, e := range entries {
		r, err := parseRule(e)
		if err != nil {
			return Allowlist{}, err
		}
		a.rules = append(a.rules, r)
	}
	return a, nil
}

func parseRule(e string) (rule, error) {
	s := strings.TrimSpace(e)
	if s == "" {
		return rule{}, fmt.Errorf("an empty host")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/ \t?#@") {
		return rule{}, fmt.Errorf("%q is not a host (write a host name like registry.npmjs.org, host:port, or *.example.com; no scheme, path or user)", e)
	}
	host, port := s, 0
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return rule{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", e)
		}
		host, port = h, n
	} else if strings.Count(s, ":") == 1 {
		return rule{}, fmt.Errorf("%q: %v", e, err)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	r := rule{port: port}
	if strings.HasPrefix(host, "*.") {
		r.suffix = true
		host = host[2:]
	}
	if host == "" || strings.Contains(host, "*") {
		return rule{}, fmt.Errorf("%q: a wildcard may only open a name, as in *.example.com", e)
	}
	if ip := net.ParseIP(host); ip != nil {
		if r.suffix {
			return rule{}, fmt.Errorf("%q: an IP address takes no wildcard", e)
		}
		r.ip = true
		host = ip.String()
	} else if !validName(host) {
		return rule{}, fmt.Errorf("%q is not a valid host name", e)
	}
	r.host = host
	return r, nil
}

func validName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Allows says whether host:port is let through, and whether it was allowed
// by an IP literal (which may then be a loopback or private address).
func (a Allowlist) Allows(host string, port int) (ok, byIP bool) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if ip := net.ParseIP(h); ip != nil {
		h = ip.String()
	}
	for _, r := range a.rules {
		if r.port != 0 && r.port != port {
			continue
		}
		switch {
		case r.suffix && strings.HasSuffix(h, "."+r.host):
			return true, false
		case !r.suffix && h == r.host:
			return true, r.ip
		}
	}
	return false, false
}

// Empty says whether nothing is allowed.
func (a Allowlist) Empty() bool { return len(a.rules) == 0 }
