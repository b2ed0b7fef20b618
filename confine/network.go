package confine

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/netpolicy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// Network is a loop's network for its agent runs: the loop's proxy,
// started at the first agent run of the engine and closed with it, and
// the hosts it refused since the runs under way started. Emit records
// what it saw (the zero Network with an Emit is ready).
type Network struct {
	Emit    func(record.Event)
	proxy   *netpolicy.Proxy
	started bool
	// refused are the hosts the proxy refused since the agent runs under
	// way started: what a failed run's message names.
	refused []string
}

// Confine puts loop l's network policy and masks in p (dir is the loop
// folder). fresh: a run starts with none in flight, and the count of
// refused hosts starts again.
func (n *Network) Confine(p *sandbox.Policy, l *spec.Loop, dir string, fresh bool) error {
	home, _ := os.UserHomeDir()
	p.Masked = netpolicy.Masks(l, home, dir)
	if h := l.Agent.Env["HOME"]; h != "" && h != home {
		p.Masked = append(p.Masked, netpolicy.Masks(l, h, dir)...)
	}
	if !n.started {
		x, err := netpolicy.Start(l, p.Kind)
		if err != nil {
			return err
		}
		n.proxy, n.started = x, true
		if what, ok := sandbox.NetworkEnforced(p.Kind); x == nil && !ok && l.Network.Mode != "open" {
			// `network: open` is among the loop file's warnings already.
			n.Emit(record.Event{Event: record.Warning, Kind: "network_open", Message: "agents' network is open: " + what})
		}
	}
	p.Net = n.proxy.Network()
	if fresh {
		n.refused = nil
	}
	return nil
}

// Flush records the connections the proxy saw since the last flush.
func (n *Network) Flush() {
	for _, ev := range n.proxy.Drain() {
		n.Emit(ev) // the state's list of refused hosts: NoteRefused
		if ev.Event == record.NetRefused && len(n.refused) < 5 && !slices.Contains(n.refused, ev.To) {
			n.refused = append(n.refused, ev.To)
		}
	}
}

// Close stops the loop's proxy and records what it saw last.
func (n *Network) Close() {
	n.proxy.Close()
	n.Flush()
	n.proxy, n.started = nil, false
}

// RefusedFix is the fix of a failed agent run during which the loop's
// proxy refused a connection ("" when it refused none): a CLI whose model
// API is refused reports a failed login or a network error, and the fix
// it suggests (log in, check the key) is not the one. It names the hosts
// and the field that allows one.
func (n *Network) RefusedFix() string {
	if len(n.refused) == 0 {
		return ""
	}
	return fmt.Sprintf("the loop's proxy refused %s during this run: if the agent's model API (or its gateway) is among them, "+
		"the agent could not reach it, whatever its message says; allow it with `network: {allow: [%s]}` in the loop file "+
		"(an endpoint set in agent.env or in the environment, such as ANTHROPIC_BASE_URL, is allowed by itself)",
		strings.Join(n.refused, ", "), n.refused[0])
}

// maxRefused bounds the state's list of refused hosts.
const maxRefused = 20

// NoteRefused is the state's list of refused hosts with the host of a
// net_refused record added, which the report, status and the dashboard
// show: the agents' (through the loop's proxy) and the checks' (through
// the judge's, marked so: checks.network.allow is where those are
// allowed). It returns list itself when ev adds nothing.
func NoteRefused(list []string, ev record.Event) []string {
	if ev.Event != record.NetRefused || ev.To == "" {
		return list
	}
	host := ev.To
	if ev.Phase == "checks" {
		host += " (checks)"
	}
	if len(list) < maxRefused && !slices.Contains(list, host) {
		list = append(list, host)
	}
	return list
}
