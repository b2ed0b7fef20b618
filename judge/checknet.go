package judge

import (
	"sync"

	"github.com/looprinter/looprinter/netpolicy"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The checks' network by allowlist: `checks.network: {allow: [...]}`.
// Each check keeps a network namespace of its own (as with none); the
// layer helper runs a relay in it to a proxy of the judge's own, which
// lets through the hosts of checks.network.allow only (a registry for
// `setup`, a database on the host's loopback for integration tests) and
// makes a record of every connection, allowed or refused. One proxy per
// loop folder and process, started on the first check that needs it and
// closed with the engine (CloseChecksNetwork). Only a bubblewrap box can
// hold the relay: under Landlock the checks get no network at all, and
// with the sandbox off they run unconfined; both are said once.

// checkNets are the checks' proxies by loop folder.
var checkNets sync.Map // dir → *checkNet

type checkNet struct {
	mu    sync.Mutex
	proxy *netpolicy.Proxy
	sink  func(record.Event)
}

// noteChecksNetwork registers where the loop's checks' connections are
// recorded (the judge's records), before its checks run.
func (j *Judge) noteChecksNetwork() {
	if j.spec().Checks.Network != spec.ChecksNetworkAllow {
		return
	}
	v, _ := checkNets.LoadOrStore(j.Dir, &checkNet{})
	cn := v.(*checkNet)
	cn.mu.Lock()
	cn.sink = j.emit
	cn.mu.Unlock()
}

// boxNetworks are the check box's networks for loop l: an allowlist is a
// box without the network, for its setups too, reached through the proxy.
func boxNetworks(l *spec.Loop) (network, setup string) {
	switch l.Checks.Network {
	case spec.ChecksNetworkAllow:
		return sandbox.CheckNetworkNone, sandbox.CheckNetworkNone
	case "":
		return sandbox.CheckNetworkNone, ""
	}
	return string(l.Checks.Network), ""
}

// checksProxy is the network of r's checks: r's proxy, or the proxy of
// r's loop's checks, started once; the check box is built with it
// (CheckBoxOptions.Proxy). nil when the loop's checks have no allowlist.
// why says what the box kind gives up ("" when nothing).
func checksProxy(r *CheckRequest, kind string) (n *sandbox.Network, why string, err error) {
	l := r.Loop
	if l.Checks.Network != spec.ChecksNetworkAllow {
		return nil, "", nil
	}
	switch kind {
	case sandbox.Landlock:
		return nil, "checks.network allow needs a bubblewrap box for the judge's proxy: under Landlock the checks get no network at all", nil
	case sandbox.Off:
		return nil, "checks.network allow is not enforced with the sandbox off: the checks reach the host's network", nil
	}
	if r.Proxy != nil {
		return r.Proxy, "", nil
	}
	n, err = loopChecksProxy(l)
	return n, "", err
}

// loopChecksProxy is the proxy of loop l's checks, started on first use.
func loopChecksProxy(l *spec.Loop) (*sandbox.Network, error) {
	v, _ := checkNets.LoadOrStore(l.Dir, &checkNet{})
	cn := v.(*checkNet)
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.proxy == nil {
		p, err := netpolicy.StartChecks(l, func(ev record.Event) {
			cn.mu.Lock()
			sink := cn.sink
			cn.mu.Unlock()
			if sink != nil {
				sink(ev)
			}
		})
		if err != nil {
			return nil, err
		}
		cn.proxy = p
	}
	return cn.proxy.Network(), nil
}

// CloseChecksNetwork stops the checks' proxy of the loop folder dir, if
// one runs.
func CloseChecksNetwork(dir string) {
	v, ok := checkNets.LoadAndDelete(dir)
	if !ok {
		return
	}
	cn := v.(*checkNet)
	cn.mu.Lock()
	proxy := cn.proxy
	cn.mu.Unlock()
	proxy.Close() // its last records go to the sink: not under the lock
}
