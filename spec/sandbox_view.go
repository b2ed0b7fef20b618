package spec

import "fmt"

// SocketWarnings are validate's warnings about sandbox.allow_sockets: each
// socket let into the view is a way out of the sandbox to whatever serves
// it.
func (l *Loop) SocketWarnings() []string {
	var w []string
	for _, s := range l.SandboxOpts.AllowSockets {
		w = append(w, fmt.Sprintf("sandbox.allow_sockets: %s is let into every agent run's and check's view: whatever serves it acts for the agent's code, outside the sandbox", s))
	}
	return w
}
