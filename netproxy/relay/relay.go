// Package relay carries connections from a TCP listener to the loop's
// network proxy on a unix socket, byte for byte. It is its own package,
// with only the standard library's network packages below it, so that the
// sandbox's layer helper (sandbox/nshelper), which serves it inside an
// agent's network namespace, starts without the proxy's HTTP machinery.
package relay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Serve accepts connections on ln (127.0.0.1:PORT inside the agent's
// network namespace) and carries each, byte for byte, to the proxy's unix
// socket at socket. It returns when ln is closed.
func Serve(ln net.Listener, socket string) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			addr, release := SockAddr(socket)
			up, err := net.Dial("unix", addr)
			release()
			if err != nil {
				io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlooprinter: the loop's network proxy is not running\n")
				return
			}
			defer up.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(c, up)
				CloseWrite(c)
				close(done)
			}()
			io.Copy(up, c)
			CloseWrite(up)
			<-done
		}()
	}
}

// CloseWrite ends c's writing half, or all of c when it has none.
func CloseWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		c.Close()
	}
}

// maxSockPath is the longest path a unix socket's address holds (108
// bytes on Linux, with its terminating zero).
const maxSockPath = 100

// SockAddr is an address for the unix socket at path that fits a socket
// address: the path itself when short, else the path through the socket's
// folder opened as a descriptor (/proc/self/fd/N/NAME, Linux), which done
// closes once the socket is bound or dialled.
func SockAddr(path string) (addr string, done func()) {
	if len(path) <= maxSockPath {
		return path, func() {}
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return path, func() {}
	}
	via := fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path))
	if _, err := os.Stat(filepath.Dir(via)); err != nil || len(via) > maxSockPath {
		d.Close()
		return path, func() {}
	}
	return via, func() { d.Close() }
}
