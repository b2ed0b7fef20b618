package loop

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/redact"

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
	if h := e.spec.Agent.Env["HOME"]; h != "" && h != home {
		p.Masked = append(p.Masked, netpolicy.Masks(e.spec, h, e.dir)...)
	}
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
		if ev.Event == record.NetRefused && len(e.st.NetRefused) < 20 && !slices.Contains(e.st.NetRefused, ev.To) {
			e.st.NetRefused = append(e.st.NetRefused, ev.To)
		}
	}
}

// closeNetwork stops the loop's proxy and records what it saw last.
func (e *Engine) closeNetwork() {
	e.netProxy.Close()
	e.flushNetwork()
	e.netProxy, e.netStarted = nil, false
}

// secretRule marks a Tamper that is a secret in a changed file.
const secretRule = "secret_in_change"

// maxScan bounds the size of a changed file scanned for secrets.
const maxScan = 16 << 20

// secretsIn says which secrets a changed regular file of a layer holds
// ("" when none): the kinds and lines, never the values.
func secretsIn(path string, r *redact.Redactor) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxScan {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var parts []string
	for _, f := range redact.Scan(r, data) {
		parts = append(parts, fmt.Sprintf("%s on line %d", f.Kind, f.Line))
	}
	return strings.Join(parts, ", ")
}
