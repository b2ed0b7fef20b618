package netpolicy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/netproxy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// A fallback agent's backend is one the loop uses: its model API hosts are
// allowed and its login files are not masked; a backend no agent names
// stays masked.
func TestPinFallbackBackendIsUsed(t *testing.T) {
	l := parse(t, "agent:\n  backend: claude\n  fallback:\n    - {backend: codex}\n")
	l.Agent.Fallback = append(l.Agent.Fallback, spec.Fallback{Model: "x"}) // no backend of its own
	b := backends(l)
	if _, ok := b["codex"]; !ok || len(b) != 2 {
		t.Errorf("backends %v, want claude and codex", b)
	}
	if got := Allow(l); !slices.Contains(got, "api.openai.com") || !slices.Contains(got, "api.anthropic.com") {
		t.Errorf("allow %v: the fallback's host is not allowed", got)
	}
	t.Setenv("CODEX_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	m := Masks(l, "/h", "/h/work")
	if slices.Contains(m, "/h/.codex/auth.json") {
		t.Errorf("the fallback's login is masked: %v", m)
	}
	if !slices.Contains(m, "/h/.gemini/oauth_creds.json") && !containsUnder(m, "/h/.gemini") {
		t.Errorf("an unused backend's login is not masked: %v", m)
	}
	// The fallback keeps the env its backend got as a main agent.
	l = parse(t, "agent:\n  backend: claude\n  fallback:\n    - {backend: codex}\nagents:\n  build: {backend: codex, env: {OPENAI_BASE_URL: 'http://127.0.0.1:7001'}}\n")
	for i := 0; i < 20; i++ { // map order: the fallback seen before or after the agent
		if got := Allow(l); !slices.Contains(got, "127.0.0.1:7001") {
			t.Fatalf("allow %v: the codex agent's endpoint lost", got)
		}
	}
}

func containsUnder(m []string, dir string) bool {
	for _, p := range m {
		if sandbox.Within(p, dir) {
			return true
		}
	}
	return false
}

// A login file named by a variable ($CODEX_HOME/auth.json) is masked where
// the variable points, and not at all (never as a relative path) when it
// is not set.
func TestPinMasksVariableLoginFiles(t *testing.T) {
	l := parse(t, "agent: {backend: claude}\n")
	t.Setenv("CODEX_HOME", "/srv/codexhome")
	m := Masks(l, "/h", "/h/work")
	if !slices.Contains(m, "/srv/codexhome/auth.json") || !slices.Contains(m, "/h/.codex/auth.json") {
		t.Errorf("codex's logins not masked: %v", m)
	}
	t.Setenv("CODEX_HOME", "")
	m = Masks(l, "/h", "/h/work")
	for _, p := range m {
		if !filepath.IsAbs(p) || strings.Contains(p, "$") {
			t.Errorf("mask %q", p)
		}
	}
	if slices.Contains(m, "/srv/codexhome/auth.json") {
		t.Errorf("an unset variable's path masked: %v", m)
	}
	// Each path once; allow_read lets one in.
	l = parse(t, "agent: {backend: claude}\nsandbox: {mode: auto, deny_read: [~/.ssh, ~/k], allow_read: [~/.netrc]}\n")
	m = Masks(l, "/h", "/h/work")
	n := 0
	for _, p := range m {
		if p == "/h/.ssh" {
			n++
		}
	}
	if n != 1 || slices.Contains(m, "/h/.netrc") || !slices.Contains(m, "/h/k") {
		t.Errorf("masks %v", m)
	}
}

func TestPinExpand(t *testing.T) {
	for in, want := range map[string]string{"~": "/h", "~/a": "/h/a", "~a": "~a", "/x/~": "/x/~", "": ""} {
		if got := expand(in, "/h"); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// Describe's lines and warnings, for each network mode and sandbox kind.
func TestPinDescribe(t *testing.T) {
	home := t.TempDir()
	join := func(ls []Line) string {
		var s []string
		for _, l := range ls {
			s = append(s, l.Label+": "+l.Text)
		}
		return strings.Join(s, "\n")
	}
	bw, _ := sandbox.NetworkEnforced(sandbox.Bwrap)
	off, _ := sandbox.NetworkEnforced(sandbox.Off)

	// No credential path exists under this HOME.
	l := parse(t, "agent: {backend: claude}\nnetwork: {allow: [a.example]}\n")
	lines, warn := Describe(l, sandbox.Bwrap, home)
	want := "network: through the loop's proxy, to api.anthropic.com, console.anthropic.com, a.example\n" +
		"network: enforced by " + bw + "\nmasked: no credential path exists here"
	if got := join(lines); got != want || len(warn) != 0 {
		t.Errorf("bwrap:\n%s\nwant\n%s\nwarn %q", got, want, warn)
	}

	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".netrc"), nil, 0o600)
	lines, warn = Describe(l, sandbox.Bwrap, home)
	if got := join(lines); !strings.HasSuffix(got, "\nmasked: "+filepath.Join(home, ".ssh")+", "+filepath.Join(home, ".netrc")) || len(warn) != 0 {
		t.Errorf("bwrap with credentials:\n%s\nwarn %q", got, warn)
	}

	lines, warn = Describe(l, sandbox.Off, home)
	if got := join(lines); got != "network: through the loop's proxy, to api.anthropic.com, console.anthropic.com, a.example" {
		t.Errorf("off: %s", got)
	}
	if len(warn) != 2 || warn[0] != "network: "+off ||
		warn[1] != "credential paths readable by agents under off (only bwrap masks them): "+filepath.Join(home, ".ssh")+", "+filepath.Join(home, ".netrc") {
		t.Errorf("off: warn %q", warn)
	}

	// network: off says so; open says nothing of the network.
	lines, warn = Describe(parse(t, "agent: {backend: claude}\nnetwork: off\n"), sandbox.Bwrap, t.TempDir())
	if got := join(lines); got != "network: off: agents get the loopback only, no proxy\nnetwork: enforced by "+bw+"\nmasked: no credential path exists here" || len(warn) != 0 {
		t.Errorf("network off: %s %q", got, warn)
	}
	lines, warn = Describe(parse(t, "agent: {backend: claude}\nnetwork: open\n"), sandbox.Off, t.TempDir())
	if len(lines) != 0 || len(warn) != 0 {
		t.Errorf("network open, no credentials: %q %q", lines, warn)
	}

	// The command backend names no host.
	lines, _ = Describe(parse(t, "agent: {backend: command, command: x}\n"), sandbox.Bwrap, t.TempDir())
	if got := join(lines); !strings.HasPrefix(got, "network: through the loop's proxy, to no host (the backend names none; add what the agent needs to network.allow)\n") {
		t.Errorf("command backend: %s", got)
	}
}

// The proxy's socket lies in the system's temporary folder while that
// path is at most 60 bytes (a unix socket's path is short), else in /tmp.
func TestPinProxySocketFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := parse(t, "network: {allow: [a.example]}\n")
	for _, n := range []int{60, 61} {
		d := base + "/" + strings.Repeat("d", n-len(base)-1)
		if len(d) != n || len(base) > 50 {
			t.Skipf("the test's folder %s is too long", base)
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TMPDIR", d)
		x, err := Start(l, sandbox.Bwrap)
		if err != nil {
			t.Fatal(err)
		}
		sock := x.Network().Socket
		x.Close()
		in := filepath.Dir(filepath.Dir(sock))
		if want := map[bool]string{true: d, false: "/tmp"}[n <= 60]; in != want {
			t.Errorf("TMPDIR of %d bytes: the socket is in %s, want %s", n, in, want)
		}
	}
}

// A connection's record names an IPv6 host in brackets, a name or an IPv4
// address as it is.
func TestPinReportHostPort(t *testing.T) {
	for _, c := range []struct {
		host string
		port int
		want string
	}{{"::1", 443, "[::1]:443"}, {"2001:db8::5", 8080, "[2001:db8::5]:8080"}, {"a.example", 80, "a.example:80"}, {"10.0.0.1", 9, "10.0.0.1:9"}} {
		if got := hostPort(c.host, c.port); got != c.want {
			t.Errorf("hostPort(%s, %d) = %s, want %s", c.host, c.port, got, c.want)
		}
	}
	var got []string
	x := &Proxy{sink: func(ev record.Event) { got = append(got, ev.To+" "+ev.Event) }}
	x.report(netproxy.Conn{Proto: "socks5", Host: "::1", Port: 22, Allowed: true})
	if len(got) != 1 || got[0] != "[::1]:22 "+record.NetAllowed {
		t.Errorf("%q", got)
	}
}
