package netproxy

import (
	"net"

	"github.com/looprinter/looprinter/netproxy/relay"
)

// Relay accepts connections on ln (127.0.0.1:PORT inside the agent's
// network namespace) and carries each, byte for byte, to the proxy's unix
// socket at socket. It returns when ln is closed (see package relay).
func Relay(ln net.Listener, socket string) error { return relay.Serve(ln, socket) }
