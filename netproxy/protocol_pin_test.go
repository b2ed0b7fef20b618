package netproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPinSplitHostPort(t *testing.T) {
	for _, c := range []struct {
		in, def, host string
		port          int
		ok            bool
	}{
		{"a.test:1", "80", "a.test", 1, true}, {"a.test:65535", "80", "a.test", 65535, true},
		{"a.test", "443", "a.test", 443, true}, {"[::1]", "80", "::1", 80, true}, {"[::1]:9", "80", "::1", 9, true},
		{"a.test:0", "80", "", 0, false}, {"a.test:65536", "80", "", 0, false}, {":80", "80", "", 0, false},
		{"", "80", "", 0, false}, {"a.test:x", "80", "", 0, false},
	} {
		h, p, err := splitHostPort(c.in, c.def)
		if h != c.host || p != c.port || (err == nil) != c.ok {
			t.Errorf("splitHostPort(%q, %s) = %q, %d, %v", c.in, c.def, h, p, err)
		}
	}
}

// rawHTTP sends one request to the fixture's socket and reads the answer.
func rawHTTP(t *testing.T, f *fixture, req string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	if resp.StatusCode == 200 {
		return resp, "" // a tunnel: its body is the host's
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// The HTTP side: default ports, what is not a proxy request, an allowed
// host that cannot be reached (502, reported as allowed with why).
func TestPinHTTPRequests(t *testing.T) {
	echo := echoServer(t)
	f := newFixture(t, echo, "a.test:443", "b.test:80", "gone.example")
	resp, _ := rawHTTP(t, f, "CONNECT a.test HTTP/1.1\r\nHost: a.test\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Errorf("CONNECT without a port: %d", resp.StatusCode)
	}
	for req, want := range map[string]int{
		"GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n":        400,
		"GET ftp://b.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n":          400,
		"GET http://b.test:0/ HTTP/1.1\r\nHost: b.test\r\n\r\n":       400,
		"CONNECT a.test:70000 HTTP/1.1\r\nHost: a.test:70000\r\n\r\n": 400,
		"GET http://b.test:81/ HTTP/1.1\r\nHost: b.test\r\n\r\n":      403,
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n":         403,
	} {
		if resp, body := rawHTTP(t, f, req); resp.StatusCode != want {
			t.Errorf("%q: %d %s, want %d", req, resp.StatusCode, body, want)
		}
	}
	resp, body := rawHTTP(t, f, "CONNECT gone.example:443 HTTP/1.1\r\nHost: gone.example:443\r\n\r\n")
	if resp.StatusCode != 502 || !strings.HasPrefix(body, "looprinter: cannot resolve gone.example") || resp.Header.Get("X-Looprinter-Refused") != "gone.example" {
		t.Errorf("unresolvable: %d %q", resp.StatusCode, body)
	}
	var saw bool
	for _, c := range f.waitReports(t, 4) {
		if c.Host == "gone.example" {
			saw = c.Allowed && strings.HasPrefix(c.Why, "cannot resolve") && c.Proto == "connect" && c.Port == 443
		}
		if c.Host == "b.test" && c.Port == 81 && (c.Allowed || c.Why != "not in the allowlist" || c.Proto != "http") {
			t.Errorf("refused: %+v", c)
		}
	}
	if !saw {
		t.Errorf("reports %+v", f.reports())
	}
}

// socksDial speaks SOCKS5 by hand: the greeting with methods, then a
// request of command cmd and address type atyp.
func socksDial(t *testing.T, f *fixture, methods []byte, cmd, atyp byte, addr []byte, port int) (net.Conn, []byte) {
	t.Helper()
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write(append([]byte{5, byte(len(methods))}, methods...))
	var greet [2]byte
	if _, err := io.ReadFull(c, greet[:]); err != nil {
		t.Fatal(err)
	}
	if greet[1] != 0 {
		return c, greet[:]
	}
	req := append([]byte{5, cmd, 0, atyp}, addr...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	reply := make([]byte, 10)
	n, _ := io.ReadFull(c, reply)
	return c, reply[:n]
}

func TestPinSOCKS5Requests(t *testing.T) {
	echo := echoServer(t)
	_, ps, _ := net.SplitHostPort(echo)
	port, _ := strconv.Atoi(ps)
	f := newFixture(t, echo, "127.0.0.1", "::1", "gone.example", "a.test")
	// No method without authentication offered.
	if _, got := socksDial(t, f, []byte{2, 1}, 1, 1, nil, 0); string(got) != string([]byte{5, 0xff}) {
		t.Errorf("no acceptable method: %v", got)
	}
	// An IPv4 address named in the list.
	c, got := socksDial(t, f, []byte{2, 0}, 1, 1, []byte{127, 0, 0, 1}, port)
	if len(got) != 10 || got[1] != 0 {
		t.Fatalf("IPv4: %v", got)
	}
	fmt.Fprintf(c, "v4\n")
	if line, _ := bufio.NewReader(c).ReadString('\n'); line != "v4\n" {
		t.Errorf("IPv4 echo: %q", line)
	}
	c.Close()
	// An IPv6 one (the echo server is on IPv4: the dial fails, host unreachable).
	if _, got := socksDial(t, f, []byte{0}, 1, 4, net.ParseIP("::1").To16(), port); len(got) != 10 || got[1] != 4 {
		t.Errorf("IPv6: %v", got)
	}
	// A name the list allows that does not resolve: host unreachable.
	name := []byte("gone.example")
	if _, got := socksDial(t, f, []byte{0}, 1, 3, append([]byte{byte(len(name))}, name...), 443); len(got) != 10 || got[1] != 4 {
		t.Errorf("unresolvable: %v", got)
	}
	// Not in the list.
	name = []byte("b.example")
	if _, got := socksDial(t, f, []byte{0}, 1, 3, append([]byte{byte(len(name))}, name...), 443); len(got) != 10 || got[1] != 2 {
		t.Errorf("not allowed: %v", got)
	}
	// BIND: only CONNECT is served.
	if _, got := socksDial(t, f, []byte{0}, 2, 1, []byte{127, 0, 0, 1}, port); len(got) != 10 || got[1] != 7 {
		t.Errorf("BIND: %v", got)
	}
	// An address type that does not exist.
	if _, got := socksDial(t, f, []byte{0}, 1, 9, nil, 0); len(got) < 2 || got[1] != 8 {
		t.Errorf("address type 9: %v", got)
	}
	r := f.waitReports(t, 5)
	want := map[string]string{"127.0.0.1": "", "::1": "", "gone.example": "cannot resolve", "b.example": "not in the allowlist"}
	bind := false
	for _, c := range r {
		if c.Proto != "socks5" {
			t.Errorf("%+v", c)
		}
		if c.Why == "only CONNECT is served" {
			bind = !c.Allowed && c.Host == "127.0.0.1" && c.Port == port
			continue
		}
		w, ok := want[c.Host]
		if !ok || !strings.HasPrefix(c.Why, w) || c.Allowed != (c.Host != "b.example") {
			t.Errorf("report %+v", c)
		}
	}
	if !bind {
		t.Errorf("BIND not reported: %+v", r)
	}
}
