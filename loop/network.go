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
func (r *runner) confineNetwork(p *sandbox.Policy) error {
	home, _ := os.UserHomeDir()
	p.Masked = netpolicy.Masks(r.spec(), home, r.dir)
	if h := r.spec().Agent.Env["HOME"]; h != "" && h != home {
		p.Masked = append(p.Masked, netpolicy.Masks(r.spec(), h, r.dir)...)
	}
	if !r.netStarted {
		x, err := netpolicy.Start(r.spec(), p.Kind)
		if err != nil {
			return err
		}
		r.netProxy, r.netStarted = x, true
		if what, ok := sandbox.NetworkEnforced(p.Kind); x == nil && !ok && r.spec().Network.Mode != "open" {
			// `network: open` is among the loop file's warnings already.
			r.emit(record.Event{Event: record.Warning, Kind: "network_open", Message: "agents' network is open: " + what})
		}
	}
	p.Net = r.netProxy.Network()
	if len(r.st.InFlightMore) == 0 && (r.st.InFlight == nil || r.st.InFlight.Run == "") {
		r.runRefused = nil // a run starts with none in flight: a new count
	}
	return nil
}

// flushNetwork records the connections the proxy saw since the last flush.
func (r *runner) flushNetwork() {
	for _, ev := range r.netProxy.Drain() {
		r.emit(ev) // the state's list of refused hosts: noteRefused
		if ev.Event == record.NetRefused && len(r.runRefused) < 5 && !slices.Contains(r.runRefused, ev.To) {
			r.runRefused = append(r.runRefused, ev.To)
		}
	}
}

// maxRefused bounds the state's list of refused hosts.
const maxRefused = 20

// noteRefused adds the host of a net_refused record to the state's list
// of refused hosts, which the report, status and the dashboard show: the
// agents' (through the loop's proxy) and the checks' (through the judge's,
// marked so: checks.network.allow is where those are allowed). Taken
// under the state's save lock: the checks' proxy records from its own
// goroutine.
func (e *Engine) noteRefused(ev record.Event) {
	if ev.Event != record.NetRefused || ev.To == "" {
		return
	}
	host := ev.To
	if ev.Phase == "checks" {
		host += " (checks)"
	}
	e.store.with(func() {
		if len(e.st.NetRefused) < maxRefused && !slices.Contains(e.st.NetRefused, host) {
			e.st.NetRefused = append(e.st.NetRefused, host)
		}
	})
}

// closeNetwork stops the loop's proxy and records what it saw last.
func (r *runner) closeNetwork() {
	r.netProxy.Close()
	r.flushNetwork()
	r.netProxy, r.netStarted = nil, false
}

// secretRule marks a Tamper that is a secret in a changed file.
const secretRule = "secret_in_change"

// maxScan bounds the size of a changed file scanned for secrets.
const maxScan = 16 << 20

// readChange reads a changed regular file of a layer of at most maxScan
// bytes (ok false: another kind of file, larger, or unreadable).
func readChange(path string) (data []byte, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxScan {
		return nil, false
	}
	data, err = os.ReadFile(path)
	return data, err == nil
}

// secretsInData says which secrets a changed regular file of a layer
// holds ("" when none): the kinds and lines, never the values.
func secretsInData(data []byte, r *redact.Redactor) string {
	var parts []string
	for _, f := range redact.Scan(r, data) {
		parts = append(parts, fmt.Sprintf("%s on line %d", f.Kind, f.Line))
	}
	return strings.Join(parts, ", ")
}

// refusedFix is the fix of a failed agent run during which the loop's
// proxy refused a connection ("" when it refused none): a CLI whose model
// API is refused reports a failed login or a network error, and the fix
// it suggests (log in, check the key) is not the one. It names the hosts
// and the field that allows one.
func (r *runner) refusedFix() string {
	if len(r.runRefused) == 0 {
		return ""
	}
	return fmt.Sprintf("the loop's proxy refused %s during this run: if the agent's model API (or its gateway) is among them, "+
		"the agent could not reach it, whatever its message says; allow it with `network: {allow: [%s]}` in the loop file "+
		"(an endpoint set in agent.env or in the environment, such as ANTHROPIC_BASE_URL, is allowed by itself)",
		strings.Join(r.runRefused, ", "), r.runRefused[0])
}

// secretsInChange is secretsInData of a changed file with its name (a
// secret spelled in a file's name is found like one in its content).
func secretsInChange(rel string, data []byte, r *redact.Redactor) string {
	var parts []string
	for _, f := range redact.ScanName(r, rel) {
		parts = append(parts, f.Kind+" in its name")
	}
	if s := secretsInData(data, r); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
