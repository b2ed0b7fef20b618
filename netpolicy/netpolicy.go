// Package netpolicy turns a loop file's `network:` and `sandbox:` read
// lists into what the agent's sandbox enforces: the hosts the loop's proxy
// allows, the paths masked from the agent, and the proxy itself, started
// once per loop run, whose connections become records.
package netpolicy

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/netproxy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// RelayPort is the port of the relay inside a run's network namespace
// (bwrap): HTTP_PROXY and the like name 127.0.0.1:RelayPort.
const RelayPort = 3128

// backends are the backends the loop's agents use.
func backends(l *spec.Loop) map[string]map[string]string {
	out := map[string]map[string]string{}
	add := func(a spec.Agent) {
		if a.Backend == "" {
			return
		}
		env := out[a.Backend]
		if env == nil {
			env = map[string]string{}
			out[a.Backend] = env
		}
		for k, v := range a.Env {
			env[k] = v
		}
		for _, f := range a.Fallback {
			if f.Backend != "" && out[f.Backend] == nil {
				out[f.Backend] = map[string]string{}
			}
		}
	}
	add(l.Agent)
	for _, a := range l.Agents {
		add(a)
	}
	return out
}

// Allow is the loop's allowlist: the model API hosts of every backend its
// agents use (and the endpoints agent.env points them at), then
// network.allow. Sorted, without duplicates.
func Allow(l *spec.Loop) []string {
	seen := map[string]bool{}
	var out []string
	for b, env := range backends(l) {
		for _, h := range agent.NetworkHosts(b, env) {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	sort.Strings(out)
	for _, h := range l.Network.Allow {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// Masks are the paths masked in the agent's sandbox: the usual credential
// paths under home (sandbox.Credentials), the login files of every backend
// the loop does not use, and sandbox.deny_read, less sandbox.allow_read
// (and less anything that holds the loop folder dir).
func Masks(l *spec.Loop, home, dir string) []string {
	m := sandbox.Credentials(home)
	used := backends(l)
	for _, b := range agent.All() {
		if _, ok := used[b.Name]; ok {
			continue
		}
		for _, f := range b.Login.Files {
			if strings.HasPrefix(f, "$") {
				v, rest, _ := strings.Cut(f[1:], "/")
				if d := os.Getenv(v); d != "" {
					m = append(m, filepath.Join(d, rest))
				}
				continue
			}
			m = append(m, filepath.Join(home, filepath.FromSlash(f)))
		}
	}
	for _, d := range l.SandboxOpts.DenyRead {
		m = append(m, expand(d, home))
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range m {
		p = filepath.Clean(p)
		if seen[p] || sandbox.Within(dir, p) {
			continue
		}
		let := false
		for _, a := range l.SandboxOpts.AllowRead {
			let = let || sandbox.Within(p, filepath.Clean(expand(a, home)))
		}
		if !let {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// A Line is one line of Describe: a label (network, masked) and its text.
type Line struct{ Label, Text string }

// expand makes a leading ~ home.
func expand(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[1:])
	}
	return p
}

// Describe says, for validate and doctor, what the loop's network policy is
// under kind and what is masked (the paths that exist on this machine);
// warn are what the user should know is not confined.
func Describe(l *spec.Loop, kind, home string) (lines []Line, warn []string) {
	what, enforced := sandbox.NetworkEnforced(kind)
	switch l.Network.Mode {
	case spec.NetworkOpen:
		// spec's warnings say it.
	case spec.NetworkOff:
		lines = append(lines, Line{"network", "off: agents get the loopback only, no proxy"})
	default:
		to := strings.Join(Allow(l), ", ")
		if to == "" {
			// The command backend has no model API of its own.
			to = "no host (the backend names none; add what the agent needs to network.allow)"
		}
		lines = append(lines, Line{"network", "through the loop's proxy, to " + to})
	}
	if l.Network.Mode != spec.NetworkOpen {
		if !enforced {
			warn = append(warn, "network: "+what)
		} else {
			lines = append(lines, Line{"network", "enforced by " + what})
		}
	}
	var masked []string
	for _, p := range Masks(l, home, l.Dir) {
		if _, err := os.Lstat(p); err == nil {
			masked = append(masked, p)
		}
	}
	switch {
	case kind == sandbox.Bwrap && len(masked) == 0:
		lines = append(lines, Line{"masked", "no credential path exists here"})
	case kind == sandbox.Bwrap:
		lines = append(lines, Line{"masked", strings.Join(masked, ", ")})
	case len(masked) > 0:
		warn = append(warn, fmt.Sprintf("credential paths readable by agents under %s (only bwrap masks them): %s", kind, strings.Join(masked, ", ")))
	}
	return lines, warn
}

// A Proxy is the loop's proxy for one loop run: started by Start, closed
// by Close; Drain hands over the records of the connections it saw.
type Proxy struct {
	p    *netproxy.Proxy
	dir  string
	net  *sandbox.Network
	mu   sync.Mutex
	evs  []record.Event
	stop bool
	// sink, when set, takes each connection's record at once (the checks'
	// proxy) instead of keeping it for Drain.
	sink func(record.Event)
}

// Start starts the proxy of loop l under sandbox kind: on a unix socket
// (bwrap: the relay inside each run's namespace reaches it) or on the
// host's 127.0.0.1 (landlock: the only TCP port the agent may connect
// to). It returns nil for `network: open`, and a proxy with no listener for
// `network: off`.
func Start(l *spec.Loop, kind string) (*Proxy, error) {
	if l.Network.Mode == spec.NetworkOpen || kind == sandbox.Off || kind == sandbox.Seatbelt {
		return nil, nil
	}
	if l.Network.Mode == spec.NetworkOff {
		return &Proxy{net: &sandbox.Network{}}, nil
	}
	allow, err := netproxy.ParseAllow(Allow(l))
	if err != nil {
		return nil, fmt.Errorf("network.allow: %w", err)
	}
	x := &Proxy{}
	opt := netproxy.Options{
		Allow:      allow,
		HowToAllow: "to allow it, add it to `network: {allow: [...]}` in the loop file " + l.Path,
		Report:     x.report,
	}
	if kind == sandbox.Landlock {
		ln, err := netListenLoopback()
		if err != nil {
			return nil, fmt.Errorf("the loop's network proxy: %w", err)
		}
		x.p = netproxy.Serve(ln, opt)
		_, port, _ := strings.Cut(ln.Addr().String(), ":")
		n, _ := strconv.Atoi(port)
		x.net = &sandbox.Network{Port: n}
		return x, nil
	}
	if err := x.listenUnix(opt); err != nil {
		return nil, fmt.Errorf("the loop's network proxy: %w", err)
	}
	return x, nil
}

// listenUnix serves the proxy on a unix socket of a folder of its own,
// which the relay inside a run's (or a check's) network namespace reaches.
func (x *Proxy) listenUnix(opt netproxy.Options) error {
	// A unix socket path is short (108 bytes): a folder of its own in the
	// system's temporary folder, or in /tmp when that one's path is long.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	var err error
	x.dir, err = os.MkdirTemp(base, "looprinter-net-")
	if err != nil {
		return err
	}
	sock := filepath.Join(x.dir, "proxy.sock")
	if x.p, err = netproxy.Listen(sock, opt); err != nil {
		os.RemoveAll(x.dir)
		return err
	}
	x.net = &sandbox.Network{Socket: sock, Port: RelayPort}
	return nil
}

// StartChecks starts the judge's own proxy for the checks of loop l
// (`checks.network: {allow: [...]}`): on a unix socket, reached by the
// relay in each check's network namespace; it lets through the hosts of
// checks.network.allow only, and hands each connection's record to sink
// as it ends (net_allowed, net_refused, phase "checks").
func StartChecks(l *spec.Loop, sink func(record.Event)) (*Proxy, error) {
	allow, err := netproxy.ParseAllow(l.Checks.NetworkAllow)
	if err != nil {
		return nil, fmt.Errorf("checks.network.allow: %w", err)
	}
	x := &Proxy{}
	x.sink = func(ev record.Event) {
		ev.Phase = "checks"
		sink(ev)
	}
	opt := netproxy.Options{
		Allow:      allow,
		HowToAllow: "to allow it for the checks, add it to `checks: {network: {allow: [...]}}` in the loop file " + l.Path,
		Report:     x.report,
	}
	if err := x.listenUnix(opt); err != nil {
		return nil, fmt.Errorf("the checks' network proxy: %w", err)
	}
	return x, nil
}

// Network is what the sandbox needs (nil for a nil Proxy: the network is
// open).
func (x *Proxy) Network() *sandbox.Network {
	if x == nil {
		return nil
	}
	return x.net
}

func (x *Proxy) report(c netproxy.Conn) {
	ev := record.Event{Event: record.NetRefused, Kind: c.Proto, To: hostPort(c.Host, c.Port), Reason: c.Why, DurationMS: c.Duration.Milliseconds()}
	if c.Allowed {
		ev.Event = record.NetAllowed
		ev.BytesUp, ev.BytesDown = c.Up, c.Down
	}
	if x.sink != nil {
		x.sink(ev)
		return
	}
	x.mu.Lock()
	if !x.stop && len(x.evs) < maxPending {
		x.evs = append(x.evs, ev)
	}
	x.mu.Unlock()
}

// maxPending bounds the records kept between two drains.
const maxPending = 10000

func hostPort(h string, p int) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]:" + strconv.Itoa(p)
	}
	return h + ":" + strconv.Itoa(p)
}

// Drain returns the records of the connections reported since the last
// Drain, in the order they ended.
func (x *Proxy) Drain() []record.Event {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	evs := x.evs
	x.evs = nil
	return evs
}

// Close stops the proxy (ending the connections still open, which are
// reported: Drain after Close) and removes its socket.
func (x *Proxy) Close() {
	if x == nil || x.p == nil {
		return
	}
	x.p.Close()
	if x.dir != "" {
		os.RemoveAll(x.dir)
	}
}
