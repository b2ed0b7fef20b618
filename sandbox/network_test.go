//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/looprinter/looprinter/netproxy"
)

// netFixture: a service on the host's loopback the agent must not reach, an
// allowed one, the loop's proxy (on a unix socket, and on a loopback port
// for landlock) and what the proxy reported.
type netFixture struct {
	secret, allowed string // host:port
	sock            string
	tcpPort         int
	mu              sync.Mutex
	reports         []netproxy.Conn
}

func newNetFixture(t *testing.T, sockDir ...string) *netFixture {
	t.Helper()
	f := &netFixture{}
	serve := func(body string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	f.secret = serve("the host's secret service\n")
	f.allowed = serve("allowed answer\n")
	allow, err := netproxy.ParseAllow([]string{f.allowed})
	if err != nil {
		t.Fatal(err)
	}
	opt := netproxy.Options{Allow: allow, Report: func(c netproxy.Conn) {
		f.mu.Lock()
		f.reports = append(f.reports, c)
		f.mu.Unlock()
	}}
	base := ""
	if len(sockDir) > 0 {
		base = sockDir[0]
	}
	dir, err := os.MkdirTemp(base, "sbxnet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f.sock = filepath.Join(dir, "p.sock")
	p, err := netproxy.Listen(f.sock, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := netproxy.Serve(ln, opt)
	t.Cleanup(func() { tp.Close() })
	f.tcpPort = ln.Addr().(*net.TCPAddr).Port
	return f
}

// The hostile agent's script: the host's loopback directly, the allowed
// host and a refused one through the proxy, and the credentials in HOME.
func netScript(f *netFixture, home string) string {
	return fmt.Sprintf(`
curl -s -m 5 --noproxy '*' http://%s/ && echo REACHED-HOST-LOOPBACK
curl -s -m 5 http://%s/ | sed 's/^/via proxy: /'
curl -s -m 5 http://refused.example/ | sed 's/^/refused: /'
echo "ssh:[$(cat %s/.ssh/id_rsa 2>&1)]"
echo "aws:[$(cat %s/.aws/credentials 2>&1)]"
echo "netrc:[$(cat %s/.netrc 2>&1)]"
echo "env:[$HTTPS_PROXY][$ALL_PROXY][$NO_PROXY]"
`, f.secret, f.allowed, home, home, home)
}

func seedCredentials(t *testing.T, home string) {
	t.Helper()
	for f, body := range map[string]string{
		".ssh/id_rsa":      "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEY\n",
		".aws/credentials": "[default]\naws_secret_access_key=SECRETAWS\n",
		".netrc":           "machine x login u password SECRETNETRC\n",
	} {
		p := filepath.Join(home, f)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func checkNetOutput(t *testing.T, out string, f *netFixture, masked bool) {
	t.Helper()
	if strings.Contains(out, "REACHED-HOST-LOOPBACK") || strings.Contains(out, "secret service") {
		t.Errorf("the agent reached a service on the host's loopback:\n%s", out)
	}
	if !strings.Contains(out, "via proxy: allowed answer") {
		t.Errorf("the allowed host was not reached through the proxy:\n%s", out)
	}
	if !strings.Contains(out, "refused: looprinter: the connection to refused.example:80 refused") {
		t.Errorf("no clear refusal for a host off the list:\n%s", out)
	}
	if masked && strings.Contains(out, "SECRET") {
		t.Errorf("the agent read a credential:\n%s", out)
	}
	if !strings.Contains(out, "env:[http://127.0.0.1:") || !strings.Contains(out, "][socks5h://127.0.0.1:") || !strings.Contains(out, "][]") {
		t.Errorf("proxy environment:\n%s", out)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var refused, allowed bool
	for _, c := range f.reports {
		refused = refused || (!c.Allowed && c.Host == "refused.example")
		allowed = allowed || (c.Allowed && c.Down > 0)
	}
	if !refused || !allowed {
		t.Errorf("reports: %+v", f.reports)
	}
}

func TestBwrapNetworkAndMasks(t *testing.T) {
	need(t, Bwrap)
	for _, layered := range []bool{false, true} {
		t.Run("layered="+strconv.FormatBool(layered), func(t *testing.T) {
			if layered {
				needLayers(t)
			}
			l := newLayout(t)
			seedCredentials(t, l.home)
			// The proxy's socket inside the layered HOME: the layer must
			// not hide it from the relay.
			f := newNetFixture(t, l.home)
			p := l.policy(Bwrap)
			p.Net = &Network{Socket: f.sock, Port: 3128}
			p.Masked = Credentials(l.home)
			if layered {
				st := filepath.Join(l.state, "lay")
				lay := Layer{Target: l.home, Upper: filepath.Join(st, "u"), Work: filepath.Join(st, "w")}
				if _, err := PrepareLayer(lay); err != nil {
					t.Fatal(err)
				}
				p.Layers = []Layer{lay}
			}
			checkNetOutput(t, run(t, p, l, netScript(f, l.home)), f, true)
		})
	}
}

// network off: loopback only, no proxy.
func TestBwrapNetworkOff(t *testing.T) {
	need(t, Bwrap)
	l := newLayout(t)
	f := newNetFixture(t)
	p := l.policy(Bwrap)
	p.Net = &Network{}
	out := run(t, p, l, fmt.Sprintf("curl -s -m 5 http://%s/ && echo REACHED; echo proxy=[$HTTP_PROXY]; echo end", f.secret))
	if strings.Contains(out, "REACHED") || !strings.Contains(out, "proxy=[]") || !strings.Contains(out, "end") {
		t.Fatalf("%s", out)
	}
}

func TestLandlockNetwork(t *testing.T) {
	need(t, Landlock)
	if landlockOnce.abi < 4 {
		t.Skipf("Landlock ABI %d has no network rules", landlockOnce.abi)
	}
	l := newLayout(t)
	f := newNetFixture(t)
	p := l.policy(Landlock)
	p.Net = &Network{Port: f.tcpPort}
	checkNetOutput(t, run(t, p, l, netScript(f, l.home)), f, false)
}

func TestNetworkEnv(t *testing.T) {
	var n *Network
	if n.Env() != nil || (&Network{}).Env() != nil {
		t.Fatal("no proxy, no variables")
	}
	env := strings.Join((&Network{Port: 9}).Env(), " ")
	for _, want := range []string{"HTTP_PROXY=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "ALL_PROXY=socks5h://127.0.0.1:9", "all_proxy=socks5h://127.0.0.1:9", "NO_PROXY= ", "no_proxy="} {
		if !strings.Contains(env+" ", want) {
			t.Errorf("%q missing from %s", want, env)
		}
	}
}

// BenchmarkNetworkStart starts /bin/true as the engine starts an agent,
// with and without the network namespace and the relay to the loop's
// proxy, with the copy-on-write layer (the default) and without,
// interleaved so that a busy machine slows all alike; it reports each
// median in ms.
func BenchmarkNetworkStart(b *testing.B) {
	need(b, Bwrap)
	dir := b.TempDir()
	defer os.RemoveAll(TempDir(dir))
	state := b.TempDir()
	lay := Layer{Target: dir, Upper: filepath.Join(state, "upper"), Work: filepath.Join(state, "work")}
	PrepareLayer(lay)
	sdir, _ := os.MkdirTemp("", "bnet")
	defer os.RemoveAll(sdir)
	p, err := netproxy.Listen(filepath.Join(sdir, "p.sock"), netproxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	n := &Network{Socket: filepath.Join(sdir, "p.sock"), Port: 3128}
	modes := []struct {
		name string
		p    Policy
	}{
		{"bare", Policy{Kind: Off, Dir: dir}},
		{"bwrap", Policy{Kind: Bwrap, Dir: dir}},
		{"bwrap+net", Policy{Kind: Bwrap, Dir: dir, Net: n}},
	}
	if LayerProbe() == nil {
		modes = append(modes,
			struct {
				name string
				p    Policy
			}{"layer", Policy{Kind: Bwrap, Dir: dir, Layers: []Layer{lay}}},
			struct {
				name string
				p    Policy
			}{"layer+net", Policy{Kind: Bwrap, Dir: dir, Layers: []Layer{lay}, Net: n}})
	}
	times := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for _, m := range modes {
			start := time.Now()
			path, args, extra, err := m.p.Wrap("/bin/true", nil)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(path, args...)
			cmd.Env = append(os.Environ(), extra...)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v: %s", m.name, err, out)
			}
			times[m.name] = append(times[m.name], float64(time.Since(start))/1e6)
		}
	}
	for _, m := range modes {
		d := times[m.name]
		sort.Float64s(d)
		b.ReportMetric(d[len(d)/2], m.name+"-median-ms")
	}
}
