package sandbox

import (
	"fmt"
	"net"
	"strconv"

	"github.com/looprinter/looprinter/netproxy"
	"golang.org/x/sys/unix"
)

// startRelay runs in the layer helper's stage 2, in the run's new network
// namespace: it brings the loopback up and, when there is a proxy, serves
// the relay on 127.0.0.1:Port to its socket for as long as the helper lives
// (the helper outlives bubblewrap and everything the agent started).
func startRelay(n *Network) error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bring the loopback up: %w", err)
	}
	if n.Socket == "" || n.Port == 0 {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(n.Port))
	if err != nil {
		return err
	}
	go netproxy.Relay(ln, n.Socket)
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
