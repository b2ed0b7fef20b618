package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// fixture: a proxy on a unix socket, a relay on 127.0.0.1 in front of it,
// and the reports it made. Names ending in .test resolve to 192.0.2.1 and
// are dialed to target; evil.test resolves to the loopback.
type fixture struct {
	sock, relay string
	p           *Proxy
	mu          sync.Mutex
	got         []Conn
}

func (f *fixture) reports() []Conn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Conn(nil), f.got...)
}

func newFixture(t *testing.T, target string, allow ...string) *fixture {
	t.Helper()
	a, err := ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "np") // short: a unix socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fixture{sock: filepath.Join(dir, "proxy.sock")}
	f.p, err = Listen(f.sock, Options{
		Allow:      a,
		HowToAllow: "add it to network.allow in the loop file",
		Report: func(c Conn) {
			f.mu.Lock()
			f.got = append(f.got, c)
			f.mu.Unlock()
		},
		Resolve: func(ctx context.Context, host string) ([]net.IP, error) {
			switch {
			case host == "evil.test":
				return []net.IP{net.ParseIP("127.0.0.1")}, nil
			case strings.HasSuffix(host, ".test"):
				return []net.IP{net.ParseIP("192.0.2.1")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			h, _, _ := net.SplitHostPort(addr)
			if h == "192.0.2.1" {
				addr = target
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.p.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go Relay(ln, f.sock)
	t.Cleanup(func() { ln.Close() })
	f.relay = ln.Addr().String()
	return f
}

func (f *fixture) client(t *testing.T) *http.Client {
	u, _ := url.Parse("http://" + f.relay)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(u),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
}

// waitReports waits until n connections were reported.
func (f *fixture) waitReports(t *testing.T, n int) []Conn {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if r := f.reports(); len(r) >= n {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("got %d reports, want %d: %+v", len(f.reports()), n, f.reports())
	return nil
}

func TestHTTPForwardAllowedAndRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Host, r.URL.Path)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := newFixture(t, srv.Listener.Addr().String(), "api.test:"+port)
	c := f.client(t)

	resp, err := c.Get("http://api.test:" + port + "/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello api.test:"+port+" /v1/x" {
		t.Fatalf("allowed: %d %q", resp.StatusCode, body)
	}

	resp, err = c.Get("http://other.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "other.test") || !strings.Contains(string(body), "network.allow") {
		t.Fatalf("refused: %d %q", resp.StatusCode, body)
	}
	r := f.waitReports(t, 2)
	byHost := map[string]Conn{}
	for _, c := range r {
		byHost[c.Host] = c
	}
	if a := byHost["api.test"]; !a.Allowed || a.Proto != "http" || a.Up == 0 || a.Down == 0 || a.Port != atoi(port) {
		t.Errorf("allowed report: %+v", a)
	}
	if o := byHost["other.test"]; o.Allowed || o.Why == "" {
		t.Errorf("refused report: %+v", o)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestConnectTLSAllowedAndRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 100000))
	}))
	defer srv.Close()
	f := newFixture(t, srv.Listener.Addr().String(), "*.models.test:443")
	c := f.client(t)
	resp, err := c.Get("https://api.models.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != 100000 {
		t.Fatalf("body: %d bytes", len(body))
	}
	c.CloseIdleConnections()
	// The wildcard covers sub-domains only, and only its port.
	for _, u := range []string{"https://models.test/", "https://api.models.test:8443/", "https://evil.test/"} {
		_, err := c.Get(u)
		if err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("%s: %v, want Forbidden", u, err)
		}
	}
	r := f.waitReports(t, 4)
	var allowed Conn
	for _, c := range r {
		if c.Allowed {
			allowed = c
		}
	}
	if allowed.Proto != "connect" || allowed.Host != "api.models.test" || allowed.Port != 443 || allowed.Down < 100000 || allowed.Up == 0 || allowed.Duration <= 0 {
		t.Errorf("allowed report: %+v", allowed)
	}
}

func TestConnectRawRefusalMessage(t *testing.T) {
	f := newFixture(t, "127.0.0.1:9")
	c, err := net.Dial("tcp", f.relay)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || resp.Header.Get("X-Looprinter-Refused") != "github.com" ||
		!strings.Contains(string(body), "github.com:443 refused") || !strings.Contains(string(body), "add it to network.allow in the loop file") {
		t.Fatalf("%d %v %q", resp.StatusCode, resp.Header, body)
	}
}

// A name allowed by the list that resolves to the loopback does not reach
// the host's own services; an IP named in the list does.
func TestLoopbackOnlyByIP(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	f := newFixture(t, echo, "evil.test", "127.0.0.1:"+port)
	c, err := net.Dial("tcp", f.relay)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT evil.test:%s HTTP/1.1\r\nHost: evil.test\r\n\r\n", port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != 502 {
		t.Fatalf("evil.test: %v %v", resp, err)
	}
	sd, err := proxy.SOCKS5("tcp", f.relay, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sd.Dial("tcp", echo)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "ping\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || line != "ping\n" {
		t.Fatalf("echo through socks: %q %v", line, err)
	}
}

func TestSOCKS5(t *testing.T) {
	echo := echoServer(t)
	f := newFixture(t, echo, "pkg.test:7000")
	sd, err := proxy.SOCKS5("unix", f.sock, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sd.Dial("tcp", "pkg.test:7000")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "hello\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || line != "hello\n" {
		t.Fatalf("%q %v", line, err)
	}
	_, err = sd.Dial("tcp", "pkg.test:7001")
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("refused port: %v", err)
	}
	_, err = sd.Dial("tcp", "192.0.2.1:7000")
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("an IP not named: %v", err)
	}
	r := f.waitReports(t, 3)
	n := 0
	for _, c := range r {
		if c.Allowed && c.Proto == "socks5" && c.Host == "pkg.test" && c.Up == 6 && c.Down == 6 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("reports: %+v", r)
	}
}

// Close ends an open tunnel and returns, and the tunnel is reported.
func TestCloseEndsTunnels(t *testing.T) {
	echo := echoServer(t)
	f := newFixture(t, echo, "a.test:1")
	sd, _ := proxy.SOCKS5("unix", f.sock, nil, proxy.Direct)
	conn, err := sd.Dial("tcp", "a.test:1")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{})
	go func() { f.p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs with an open tunnel")
	}
	if len(f.reports()) != 1 {
		t.Fatalf("reports: %+v", f.reports())
	}
	if _, err := os.Stat(f.sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	f := newFixture(t, "127.0.0.1:9", "a.test")
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /relative HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("%v %v", resp, err)
	}
	c2, _ := net.Dial("unix", f.sock)
	io.WriteString(c2, "\x04\x01\x00\x50\x7f\x00\x00\x01\x00") // SOCKS4: closed, no hang
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("socks4: %v", err)
	}
	c2.Close()
}

func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestParseAllow(t *testing.T) {
	a, err := ParseAllow([]string{"API.Example.com", "*.npmjs.org:443", "10.0.0.1:8080", "[::1]:9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		ok   bool
	}{
		{"api.example.com", 443, true}, {"api.example.com.", 80, true}, {"x.api.example.com", 443, false},
		{"registry.npmjs.org", 443, true}, {"npmjs.org", 443, false}, {"registry.npmjs.org", 80, false},
		{"evilnpmjs.org", 443, false}, {"10.0.0.1", 8080, true}, {"10.0.0.1", 80, false}, {"::1", 9, true},
	} {
		if ok, _ := a.Allows(c.host, c.port); ok != c.ok {
			t.Errorf("%s:%d: %v, want %v", c.host, c.port, ok, c.ok)
		}
	}
	for _, bad := range []string{"", "https://x.com", "x.com/path", "*", "a.*.com", "x.com:0", "x.com:http", "*.10.0.0.1", "user@x.com", "bad_name!"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A socket whose path is longer than a socket address holds (a user's
// long HOME, a test's folder) still listens and is reached.
func TestLongSocketPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 8))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "p.sock")
	p, err := Listen(sock, Options{})
	if err != nil {
		t.Fatalf("a %d-byte socket path: %v", len(sock), err)
	}
	defer p.Close()
	addr, done := sockAddr(sock)
	c, err := net.Dial("unix", addr)
	done()
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
}
