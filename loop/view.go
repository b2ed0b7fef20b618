package loop

import (
	"os"
	"sort"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// viewOf is what an agent run of loop l sees besides its writable trees
// (sandbox.ViewSpec): the machine's system and toolchains for the agent's
// environment, the agent CLIs' folders of HOME, and what the loop file's
// sandbox.allow_read and allow_sockets add.
func viewOf(l *spec.Loop) sandbox.ViewSpec {
	env := os.Environ()
	keys := make([]string, 0, len(l.Agent.Env))
	for k := range l.Agent.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+l.Agent.Env[k])
	}
	var keep []string
	for _, b := range agent.All() {
		keep = append(keep, b.HomePaths...)
	}
	return sandbox.ViewSpec{Env: env, HomeKeep: keep, AllowRead: l.SandboxOpts.AllowRead, AllowSockets: l.SandboxOpts.AllowSockets}
}

// shownOf are the paths outside the loop folder an agent run of l sees
// read-only besides its manifest: the repository the engine commits to.
func shownOf(l *spec.Loop) []string {
	if g := gitDir(l); g != "" {
		return []string{g}
	}
	return nil
}

// ViewOf is the manifest of an agent run of loop l: what it sees of the
// machine, from where and why (for doctor and validate).
func ViewOf(l *spec.Loop) sandbox.Manifest {
	return sandbox.BuildManifest(viewOf(l))
}
