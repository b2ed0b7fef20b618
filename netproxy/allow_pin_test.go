package netproxy

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

// The edges of what an allowlist entry may be: ports 1 to 65535, names of
// at most 253 bytes, labels of at most 63, letters, digits, - and _.
func TestPinParseAllowEdges(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(label63+".", 3) + strings.Repeat("b", 253-3*64) // 3*64 + 61 = 253
	if len(name253) != 253 {
		t.Fatalf("%d", len(name253))
	}
	for _, good := range []string{"x.com:1", "x.com:65535", label63 + ".com", name253, "a-b_c.d0-9z", "AZ.example", "x.com.", " x.com ", "[::1]:1", "1.2.3.4"} {
		if _, err := ParseAllow([]string{good}); err != nil {
			t.Errorf("%q refused: %v", good, err)
		}
	}
	for _, bad := range []string{"x.com:65536", "x.com:-1", "x.com:", label63 + "a.com", name253 + "b", "a..b", ".a", "a`b", "a{b", "a~b", "a=b", "a!b", "*.", "*.*.x", "x.com:1:2x", "\t"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// One bad entry refuses the list, naming it.
	if a, err := ParseAllow([]string{"ok.com", "x.com:0"}); err == nil || !a.Empty() || !strings.Contains(err.Error(), `"x.com:0"`) {
		t.Errorf("%v %v", a, err)
	}
	if !(Allowlist{}).Empty() {
		t.Error("Empty")
	}
	if a, _ := ParseAllow([]string{"x.com"}); a.Empty() {
		t.Error("not Empty")
	}
}

func TestPinParseAllowMessages(t *testing.T) {
	for in, want := range map[string]string{
		"":          "an empty host",
		"http://x":  `"http://x" is not a host (write a host name like registry.npmjs.org, host:port, or *.example.com; no scheme, path or user)`,
		"x.com:0":   `"x.com:0": the port must be a number from 1 to 65535`,
		"*.1.2.3.4": `"*.1.2.3.4": an IP address takes no wildcard`,
		"a.*.com":   `"a.*.com": a wildcard may only open a name, as in *.example.com`,
		"bad!":      `"bad!" is not a valid host name`,
		"a]:80":     `"a]:80": address a]:80: `,
	} {
		_, err := ParseAllow([]string{in})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// Allows: exact names, sub-domains of a wildcard only, ports, IP literals
// in any spelling, and whether the match was by IP.
func TestPinAllows(t *testing.T) {
	a, err := ParseAllow([]string{"*.example.com", "exact.org:8443", "10.0.0.1", "::ffff:10.0.0.2", "host.net", "*.any.io:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host     string
		port     int
		ok, byIP bool
	}{
		{"a.example.com", 1, true, false}, {"A.B.Example.COM.", 65535, true, false}, {"example.com", 443, false, false},
		{"xexample.com", 443, false, false}, {"exact.org", 8443, true, false}, {"exact.org", 443, false, false},
		{"sub.exact.org", 8443, false, false}, {"10.0.0.1", 1, true, true}, {"::ffff:10.0.0.1", 80, true, true},
		{"10.0.0.2", 80, true, true}, {"10.0.0.3", 80, false, false}, {"host.net", 0, true, false}, {"host.net.evil", 80, false, false},
		{"x.any.io", 443, true, false}, {"x.any.io", 80, false, false}, {"", 80, false, false},
	} {
		ok, byIP := a.Allows(c.host, c.port)
		if ok != c.ok || byIP != c.byIP {
			t.Errorf("Allows(%s, %d) = %v, %v; want %v, %v", c.host, c.port, ok, byIP, c.ok, c.byIP)
		}
	}
	// The first matching rule decides whether it was by IP.
	b, _ := ParseAllow([]string{"*.x.com:80", "10.0.0.9"})
	if ok, byIP := b.Allows("10.0.0.9", 80); !ok || !byIP {
		t.Errorf("%v %v", ok, byIP)
	}
}

// dial: a name is resolved by the proxy and reaches its first address that
// is not the host's own (loopback, link-local, unspecified); an IP named in
// the list is dialed as it is.
func TestPinDial(t *testing.T) {
	var dialed []string
	resolve := map[string][]net.IP{
		"mixed.test": {net.ParseIP("127.0.0.1"), net.ParseIP("169.254.169.254"), net.ParseIP("0.0.0.0"), net.ParseIP("ff02::1"), net.ParseIP("192.0.2.7"), net.ParseIP("192.0.2.8")},
		"local.test": {net.ParseIP("::1"), net.ParseIP("fe80::1")},
		"meta.test":  {net.ParseIP("169.254.169.254")},
		"any.test":   {net.ParseIP("::")},
		"mc.test":    {net.ParseIP("ff02::2")},
		"none.test":  {},
	}
	a, _ := ParseAllow([]string{"*.test", "127.0.0.1", "fail.example"})
	p := &Proxy{ctx: context.Background(), opt: Options{
		Allow: a,
		Resolve: func(ctx context.Context, host string) ([]net.IP, error) {
			if ips, ok := resolve[host]; ok {
				return ips, nil
			}
			return nil, errors.New("no such host")
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			if strings.HasPrefix(addr, "192.0.2.8") {
				return nil, errors.New("refused by the host")
			}
			c1, c2 := net.Pipe()
			c2.Close()
			return c1, nil
		},
	}}
	if c, why := p.dial("mixed.test", 443); c == nil || why != "" || dialed[0] != "192.0.2.7:443" {
		t.Errorf("mixed: %v %q %v", c, why, dialed)
	}
	for host, want := range map[string]string{
		"local.test": "local.test resolves to ::1, a loopback or link-local address; name the address itself in the allowlist to reach it",
		"meta.test":  "meta.test resolves to 169.254.169.254, a loopback or link-local address",
		"any.test":   "any.test resolves to ::, a loopback",
		"mc.test":    "mc.test resolves to ff02::2, a loopback",
		"none.test":  "cannot resolve none.test: <nil>",
		"gone.test":  "cannot resolve gone.test: no such host",
	} {
		dialed = nil
		if c, why := p.dial(host, 443); c != nil || !strings.HasPrefix(why, want) || len(dialed) != 0 {
			t.Errorf("%s: %v %q %v, want %q", host, c, why, dialed, want)
		}
	}
	dialed = nil
	if c, why := p.dial("127.0.0.1", 8080); c == nil || why != "" || len(dialed) != 1 || dialed[0] != "127.0.0.1:8080" {
		t.Errorf("an IP named: %v %q %v", c, why, dialed)
	}
	dialed = nil
	if c, why := p.dial("other.example", 443); c != nil || why != "" || len(dialed) != 0 {
		t.Errorf("not allowed: %v %q %v", c, why, dialed)
	}
	resolve["bad.test"] = []net.IP{net.ParseIP("192.0.2.8")}
	if c, why := p.dial("bad.test", 443); c != nil || why != "refused by the host" {
		t.Errorf("a failed dial: %v %q", c, why)
	}
}

// Without Options.Dial the proxy dials itself; an IP named reaches the
// host's loopback.
func TestPinDialDefault(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(port)
	a, _ := ParseAllow([]string{"127.0.0.1"})
	p := &Proxy{ctx: context.Background(), opt: Options{Allow: a}}
	c, why := p.dial("127.0.0.1", n)
	if c == nil || why != "" {
		t.Fatalf("%v %q", c, why)
	}
	c.Close()
	ln.Close()
	if c, why := p.dial("127.0.0.1", n); c != nil || why == "" {
		t.Errorf("a closed port: %v %q", c, why)
	}
}

func TestPinRefusal(t *testing.T) {
	p := &Proxy{}
	if got := p.refusal("x.com", 443); got != "looprinter: the connection to x.com:443 refused: x.com is not in the loop's network allowlist; add it to the allowlist" {
		t.Errorf("%s", got)
	}
	p.opt.HowToAllow = "say so"
	if got := p.refusal("::1", 9); got != "looprinter: the connection to [::1]:9 refused: ::1 is not in the loop's network allowlist; say so" {
		t.Errorf("%s", got)
	}
}
