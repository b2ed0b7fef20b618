package loop

import (
	"os"

	"github.com/looprinter/looprinter/netpolicy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// confineNetwork puts the loop's network policy and masks in p: the
// loop's proxy is started at the first agent run of the engine and closed
// with it (closeNetwork).
func (e *Engine) confineNetwork(p *sandbox.Policy) error {
	home, _ := os.UserHomeDir()
	p.Masked = netpolicy.Masks(e.spec, home, e.dir)
	if !e.netStarted {
		x, err := netpolicy.Start(e.spec, p.Kind)
		if err != nil {
			return err
		}
		e.netProxy, e.netStarted = x, true
		if what, ok := sandbox.NetworkEnforced(p.Kind); x == nil && !ok && e.spec.Network.Mode != "open" {
			// `network: open` is among the loop file's warnings already.
			e.emit(record.Event{Event: record.Warning, Kind: "network_open", Message: "agents' network is open: " + what})
		}
	}
	p.Net = e.netProxy.Network()
	return nil
}

// flushNetwork records the connections the proxy saw since the last flush.
func (e *Engine) flushNetwork() {
	for _, ev := range e.netProxy.Drain() {
		e.emit(ev)
	}
}

// closeNetwork stops the loop's proxy and records what it saw last.
func (e *Engine) closeNetwork() {
	e.netProxy.Close()
	e.flushNetwork()
	e.netProxy, e.netStarted = nil, false
}
