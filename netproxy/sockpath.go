package netproxy

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSockPath is the longest path a unix socket's address holds (108
// bytes on Linux, with its terminating zero).
const maxSockPath = 100

// sockAddr is an address for the unix socket at path that fits a socket
// address: the path itself when short, else the path through the socket's
// folder opened as a descriptor (/proc/self/fd/N/NAME, Linux), which done
// closes once the socket is bound or dialled.
func sockAddr(path string) (addr string, done func()) {
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
