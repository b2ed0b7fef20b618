package netproxy

import "github.com/looprinter/looprinter/netproxy/relay"

// sockAddr is an address for the unix socket at path that fits a socket
// address (see relay.SockAddr).
func sockAddr(path string) (addr string, done func()) { return relay.SockAddr(path) }
