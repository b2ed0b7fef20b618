package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Listen replaces a stale socket at its path, and nothing else: a file
// there stays and the proxy does not start.
func TestPinListenStaleSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "np")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // a stale socket left behind
	p, err := Listen(sock, Options{})
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v", fi, err)
	}
	p.Close()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	if p, err := Listen(file, Options{}); err == nil {
		p.Close()
		t.Fatal("listened over a file")
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("the file: %q %v", b, err)
	}
}

// A socket at a path too long for a socket address is removed by Close
// too (the listener itself only knows the short address).
func TestPinCloseRemovesLongSocket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 8))
	os.MkdirAll(dir, 0o700)
	sock := filepath.Join(dir, "p.sock")
	p, err := Listen(sock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("no socket: %v", err)
	}
	p.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left: %v", err)
	}
}

func TestPinSockAddr(t *testing.T) {
	dir, err := os.MkdirTemp("", "np")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, n := range []int{maxSockPath, maxSockPath + 1} {
		p := filepath.Join(dir, strings.Repeat("s", n-len(dir)-1))
		addr, done := sockAddr(p)
		done()
		if short := n <= maxSockPath; (addr == p) != short || (!short && !strings.HasPrefix(addr, "/proc/self/fd/")) {
			t.Errorf("%d bytes: %s", n, addr)
		}
	}
	if addr, done := sockAddr("/nonexistent/" + strings.Repeat("x", 120)); addr != "/nonexistent/"+strings.Repeat("x", 120) {
		t.Errorf("a missing folder: %s", addr)
	} else {
		done()
	}
}

// flakyListener fails its first Accepts (as on too many open files), then
// hands out conns, then reports closed.
type flakyListener struct {
	fails  int
	conns  chan net.Conn
	calls  atomic.Int64
	closed chan struct{}
	once   sync.Once
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if n := l.calls.Add(1); int(n) <= l.fails || l.fails < 0 {
		select {
		case <-l.closed:
			return nil, net.ErrClosed
		default:
		}
		return nil, errors.New("accept: too many open files")
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *flakyListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *flakyListener) Addr() net.Addr { return &net.UnixAddr{Name: "flaky", Net: "unix"} }

// An accept that fails while the proxy runs is tried again, after a pause;
// the proxy goes on serving.
func TestPinAcceptErrorsRetried(t *testing.T) {
	l := &flakyListener{fails: 2, conns: make(chan net.Conn, 1), closed: make(chan struct{})}
	p := Serve(l, Options{})
	defer p.Close()
	a, b := net.Pipe()
	l.conns <- b
	a.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(a, "GET /relative HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("served after accept errors: %v %v", resp, err)
	}
	a.Close()
	// Errors without end: paced, not a busy loop.
	l2 := &flakyListener{fails: -1, conns: make(chan net.Conn), closed: make(chan struct{})}
	p2 := Serve(l2, Options{})
	time.Sleep(200 * time.Millisecond)
	p2.Close()
	if n := l2.calls.Load(); n > 25 || n < 1 {
		t.Errorf("%d accepts in 200 ms", n)
	}
}

// The relay: a proxy that is not running is said so; an accept error is
// tried again; a closed listener ends it.
func TestPinRelay(t *testing.T) {
	l := &flakyListener{fails: 1, conns: make(chan net.Conn, 1), closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- Relay(l, "/nonexistent/proxy.sock") }()
	a, b := net.Pipe()
	l.conns <- b
	a.SetDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(a)
	if !strings.HasPrefix(string(got), "HTTP/1.1 502 Bad Gateway\r\n") || !strings.Contains(string(got), "the loop's network proxy is not running") {
		t.Errorf("%q", got)
	}
	l.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Relay: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Relay does not return once closed")
	}
	l2 := &flakyListener{fails: -1, conns: make(chan net.Conn), closed: make(chan struct{})}
	go Relay(l2, "/nonexistent/proxy.sock")
	time.Sleep(200 * time.Millisecond)
	l2.Close()
	if n := l2.calls.Load(); n > 25 || n < 1 {
		t.Errorf("relay: %d accepts in 200 ms", n)
	}
}

// Bytes a client sends right behind its CONNECT request, in the same
// write (read into the proxy's buffer with the request), reach the host.
func TestPinConnectPipelinedBytes(t *testing.T) {
	echo := echoServer(t)
	f := newFixture(t, echo, "a.test:443")
	c, err := net.Dial("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\nearly\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if line, err := br.ReadString('\n'); line != "early\n" {
		t.Errorf("the bytes behind the request: %q %v", line, err)
	}
}

// A long path's short address is used only while it fits, 100 bytes.
func TestPinSockAddrVia(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 90))
	os.MkdirAll(dir, 0o700)
	probe, done := sockAddr(filepath.Join(dir, "s"))
	done()
	if !strings.HasPrefix(probe, "/proc/self/fd/") {
		t.Skipf("no /proc/self/fd here: %s", probe)
	}
	prefix := len(probe) - 1 // "/proc/self/fd/N/"
	for _, n := range []int{maxSockPath, maxSockPath + 1} {
		name := strings.Repeat("s", n-prefix)
		addr, done := sockAddr(filepath.Join(dir, name))
		done()
		if via := strings.HasPrefix(addr, "/proc/self/fd/"); via != (n <= maxSockPath) || (via && len(addr) != n) {
			t.Errorf("a %d-byte short address: %s", n, addr)
		}
	}
}
