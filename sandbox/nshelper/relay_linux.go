//go:build linux

package nshelper

import (
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The relay to the loop's proxy, made of system calls and *os.File rather
// than package net: net's initialization comes late among the packages of
// a large binary (its dependencies sort last), and the helper's init
// function runs only once every package it imports is initialized.

// startRelay runs in stage 2, in the run's new network namespace (on the
// thread that entered it: a socket belongs to the namespace of the thread
// that makes it): it brings the loopback up and, when there is a proxy,
// serves the relay on 127.0.0.1:Port to its socket for as long as the
// helper lives (the helper outlives bubblewrap and everything the agent
// started).
func startRelay(n *Net) error {
	if err := loopbackUp(); err != nil {
		return errors.New("bring the loopback up: " + err.Error())
	}
	if n.Socket == "" || n.Port == 0 {
		return nil
	}
	ln, err := listenLoopback(n.Port)
	if err != nil {
		return err
	}
	go serveRelay(ln, n.Socket)
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// listenLoopback listens on 127.0.0.1:port; the file is non-blocking, so
// the runtime's poller waits on it.
func listenLoopback(port int) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return nil, errors.New("listen on 127.0.0.1:" + strconv.Itoa(port) + ": " + err.Error())
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "relay"), nil
}

// serveRelay accepts connections on ln and carries each, byte for byte,
// to the proxy's unix socket at socket, until ln fails.
func serveRelay(ln *os.File, socket string) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return
	}
	for {
		var nfd int
		var aerr error
		if err := rc.Read(func(fd uintptr) bool {
			nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			return aerr != unix.EAGAIN
		}); err != nil {
			return
		}
		if aerr != nil {
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: try again
			continue
		}
		go relayConn(os.NewFile(uintptr(nfd), "conn"), socket)
	}
}

func relayConn(c *os.File, socket string) {
	defer c.Close()
	up, err := dialUnix(socket)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlooprinter: the loop's network proxy is not running\n")
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		copyBytes(c, up)
		shutWrite(c)
		close(done)
	}()
	copyBytes(up, c)
	shutWrite(up)
	<-done
}

// copyBytes is a plain read and write loop (os.File's ReadFrom would try
// the file-to-file paths first).
func copyBytes(dst, src *os.File) {
	buf := make([]byte, 32<<10)
	io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
}

func dialUnix(path string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "proxy"), nil
}

// shutWrite ends f's writing half: the other side reads its end.
func shutWrite(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_WR) })
	}
}
