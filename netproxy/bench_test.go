package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkThroughput reads a 16 MiB stream from a server on the loopback,
// directly and through the relay and the proxy (CONNECT), as an agent's
// streamed model response would come; b.SetBytes makes the MB/s of each
// comparable.
func BenchmarkThroughput(b *testing.B) {
	const size = 16 << 20
	chunk := make([]byte, 32<<10)
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for n := 0; n < size; n += len(chunk) {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
		}
	}()
	dir, _ := os.MkdirTemp("", "npb")
	defer os.RemoveAll(dir)
	allow, _ := ParseAllow([]string{srv.Addr().String()})
	p, err := Listen(filepath.Join(dir, "p.sock"), Options{Allow: allow})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	rl, _ := net.Listen("tcp", "127.0.0.1:0")
	defer rl.Close()
	go Relay(rl, filepath.Join(dir, "p.sock"))

	read := func(b *testing.B, c net.Conn, r io.Reader) {
		n, err := io.Copy(io.Discard, r)
		c.Close()
		if err != nil || n != size {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			read(b, c, c)
		}
	})
	b.Run("proxy", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("tcp", rl.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Addr(), srv.Addr())
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err != nil || line != "HTTP/1.1 200 Connection established\r\n" {
				b.Fatalf("%q %v", line, err)
			}
			br.ReadString('\n')
			read(b, c, br)
		}
	})
}
