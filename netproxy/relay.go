package netproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Relay accepts connections on ln (127.0.0.1:PORT inside the agent's
// network namespace) and carries each, byte for byte, to the proxy's unix
// socket at socket. It returns when ln is closed.
func Relay(ln net.Listener, socket string) error {
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
			addr, release := sockAddr(socket)
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
				closeWrite(c)
				close(done)
			}()
			io.Copy(up, c)
			closeWrite(up)
			<-done
		}()
	}
}
