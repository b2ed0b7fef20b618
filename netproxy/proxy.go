package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Conn is one connection the proxy allowed or refused, reported when it
// ends (a refused one at once).
type Conn struct {
	Proto    string        // "connect", "http" or "socks5"
	Host     string        // as the client named it
	Port     int           //
	Allowed  bool          //
	Why      string        // a refusal's or a failure's reason
	Up, Down int64         // bytes from the client to the host, and back
	Duration time.Duration // from the request to the end of the connection
}

// Options configure a proxy.
type Options struct {
	Allow Allowlist
	// Report is called once per connection, from the connection's own
	// goroutine (it must be safe for concurrent use). nil: nothing.
	Report func(Conn)
	// HowToAllow ends the refusal message, e.g. "add it to network.allow in
	// the loop file". Empty: a default sentence.
	HowToAllow string
	// Dial dials an allowed address (tests); nil: a net.Dialer with a
	// 30-second timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolve looks a name up (tests); nil: net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]net.IP, error)
}

// A Proxy serves one listener until Close.
type Proxy struct {
	ln    net.Listener
	opt   Options
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	path  string // the unix socket to remove on Close
}

// Listen starts a proxy on a unix socket at path (mode 0600, any stale
// socket there replaced).
func Listen(path string, opt Options) (*Proxy, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	addr, done := sockAddr(path)
	ln, err := net.Listen("unix", addr)
	done()
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	os.Chmod(path, 0o600)
	p := Serve(ln, opt)
	p.path = path
	return p, nil
}

// Serve starts a proxy on ln (a loopback TCP listener under Landlock, for
// example); Close closes ln.
func Serve(ln net.Listener, opt Options) *Proxy {
	ctx, stop := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, opt: opt, ctx: ctx, stop: stop, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

// Addr is the listener's address.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops accepting, ends every open connection and waits for their
// reports.
func (p *Proxy) Close() error {
	p.stop()
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if p.path != "" {
		os.Remove(p.path)
	}
	return err
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		if p.ctx.Err() != nil {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.serve(c)
		}()
	}
}

func (p *Proxy) report(c Conn) {
	if p.opt.Report != nil {
		p.opt.Report(c)
	}
}

// serve tells SOCKS5 (first byte 5) from HTTP and serves one client.
func (p *Proxy) serve(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		p.socks(c, br)
		return
	}
	if first[0] == 4 {
		return // SOCKS4 carries no name the proxy could check; ALL_PROXY names socks5h
	}
	p.http(c, br)
}

func (p *Proxy) refusal(host string, port int) string {
	how := p.opt.HowToAllow
	if how == "" {
		how = "add it to the allowlist"
	}
	return fmt.Sprintf("looprinter: the connection to %s refused: %s is not in the loop's network allowlist; %s", net.JoinHostPort(host, strconv.Itoa(port)), host, how)
}

// check says whether host:port may be reached and dials it.
func (p *Proxy) dial(host string, port int) (net.Conn, string) {
	ok, byIP := p.opt.Allow.Allows(host, port)
	if !ok {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	addr := host
	if !byIP {
		// Names are resolved here, and a name that leads to the host's own
		// loopback or a link-local address (cloud metadata) is refused: a
		// name allowed by a wildcard must not reach what only an IP named
		// in the allowlist may.
		var ips []net.IP
		var err error
		if p.opt.Resolve != nil {
			ips, err = p.opt.Resolve(ctx, host)
		} else {
			var as []net.IPAddr
			as, err = net.DefaultResolver.LookupIPAddr(ctx, host)
			for _, a := range as {
				ips = append(ips, a.IP)
			}
		}
		if err != nil || len(ips) == 0 {
			return nil, fmt.Sprintf("cannot resolve %s: %v", host, err)
		}
		var good net.IP
		for _, ip := range ips {
			if !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !ip.IsUnspecified() && !ip.IsLinkLocalMulticast() {
				good = ip
				break
			}
		}
		if good == nil {
			return nil, fmt.Sprintf("%s resolves to %s, a loopback or link-local address; name the address itself in the allowlist to reach it", host, ips[0])
		}
		addr = good.String()
	}
	dial := p.opt.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	up, err := dial(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return nil, err.Error()
	}
	return up, ""
}

// pipe copies both ways until both sides are done, and reports.
func (p *Proxy) pipe(c net.Conn, br *bufio.Reader, up net.Conn, rec Conn, start time.Time) {
	c.SetReadDeadline(time.Time{})
	var upN, downN atomic.Int64
	done := make(chan struct{})
	go func() {
		n, _ := io.Copy(c, up)
		downN.Store(n)
		closeWrite(c)
		// The host is done: a client that keeps its side open gets a
		// moment to finish, not forever.
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		close(done)
	}()
	var src io.Reader = c
	if br != nil && br.Buffered() > 0 {
		src = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c)
	}
	n, _ := io.Copy(up, src)
	upN.Store(n)
	closeWrite(up)
	select {
	case <-done:
	case <-p.ctx.Done():
	}
	up.Close()
	<-done
	rec.Up += upN.Load()
	rec.Down += downN.Load()
	rec.Duration = time.Since(start)
	p.report(rec)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		c.Close()
	}
}

func (p *Proxy) http(c net.Conn, br *bufio.Reader) {
	start := time.Now()
	req, err := http.ReadRequest(br)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlooprinter: not a proxy request\n")
		return
	}
	rec := Conn{Proto: "http"}
	hostport := req.URL.Host
	def := "80"
	if req.Method == http.MethodConnect {
		rec.Proto = "connect"
		hostport = req.Host
		def = "443"
	} else if req.URL.Scheme == "https" {
		def = "443"
	}
	host, port, err := splitHostPort(hostport, def)
	if err != nil || (req.Method != http.MethodConnect && req.URL.Scheme != "http") {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlooprinter: the proxy takes CONNECT host:port or an absolute http:// URL\n")
		return
	}
	rec.Host, rec.Port = host, port
	up, why := p.dial(host, port)
	if up == nil {
		status, msg := "403 Forbidden", p.refusal(host, port)
		if why != "" {
			status, msg = "502 Bad Gateway", "looprinter: "+why
			rec.Allowed = true
		}
		rec.Why = why
		if !rec.Allowed {
			rec.Why = "not in the allowlist"
		}
		fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nX-Looprinter-Refused: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n", status, host, len(msg)+1, msg)
		rec.Duration = time.Since(start)
		p.report(rec)
		return
	}
	rec.Allowed = true
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			up.Close()
			return
		}
		p.pipe(c, br, up, rec, start)
		return
	}
	// Plain HTTP: the request goes on in origin form, one request per
	// upstream connection (a second request on it could name another host).
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	req.Header.Set("Connection", "close")
	cw := &countWriter{w: up}
	if err := req.Write(cw); err != nil {
		up.Close()
		rec.Why = err.Error()
		p.report(rec)
		return
	}
	rec.Up = cw.n
	c.SetReadDeadline(time.Time{})
	n, _ := io.Copy(c, up)
	up.Close()
	rec.Down = n
	rec.Duration = time.Since(start)
	p.report(rec)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func splitHostPort(hp, def string) (string, int, error) {
	if hp == "" {
		return "", 0, errors.New("no host")
	}
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		h, p = strings.Trim(hp, "[]"), def
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || h == "" {
		return "", 0, fmt.Errorf("bad port in %q", hp)
	}
	return h, n, nil
}

// SOCKS5 replies (RFC 1928).
const (
	socksOK           = 0
	socksFailure      = 1
	socksNotAllowed   = 2
	socksHostUnreach  = 4
	socksCmdNotSupp   = 7
	socksAddrNotSupp  = 8
	socksNoAcceptable = 0xff
)

func (p *Proxy) socks(c net.Conn, br *bufio.Reader) {
	start := time.Now()
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		c.Write([]byte{5, socksNoAcceptable})
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return
	}
	reply := func(code byte) { c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0}) }
	var host string
	switch req[3] {
	case 1, 4:
		ip := make(net.IP, 4)
		if req[3] == 4 {
			ip = make(net.IP, 16)
		}
		if _, err := io.ReadFull(br, ip); err != nil {
			return
		}
		host = ip.String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		reply(socksAddrNotSupp)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	rec := Conn{Proto: "socks5", Host: host, Port: port}
	if req[1] != 1 {
		reply(socksCmdNotSupp) // only CONNECT: no BIND, no UDP ASSOCIATE
		rec.Why = "only CONNECT is served"
		rec.Duration = time.Since(start)
		p.report(rec)
		return
	}
	up, why := p.dial(host, port)
	if up == nil {
		rec.Why = "not in the allowlist"
		code := byte(socksNotAllowed)
		if why != "" {
			rec.Allowed, rec.Why, code = true, why, socksHostUnreach
		}
		reply(code)
		rec.Duration = time.Since(start)
		p.report(rec)
		return
	}
	rec.Allowed = true
	reply(socksOK)
	p.pipe(c, br, up, rec, start)
}
