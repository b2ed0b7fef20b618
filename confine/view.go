package confine

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/shlex"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// View is what an agent run of loop l sees besides its writable trees
// (sandbox.ViewSpec): the machine's system and toolchains for the agent's
// environment, the agent CLIs' folders of HOME, and what the loop file's
// sandbox.allow_read and allow_sockets add.
func View(l *spec.Loop) sandbox.ViewSpec {
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
	read := append(append([]string(nil), l.SandboxOpts.AllowRead...), commandPaths(l)...)
	return sandbox.ViewSpec{Env: env, HomeKeep: keep, AllowRead: read, AllowSockets: l.SandboxOpts.AllowSockets}
}

// commandPaths are the files outside the loop folder that the loop's agent
// commands name (agent.command's program and its arguments that are paths:
// a wrapper script, its settings): the user's own configuration, shown
// read-only so that the command runs in its view.
func commandPaths(l *spec.Loop) []string {
	cmds := []string{l.Agent.Command}
	for _, a := range l.Agents {
		cmds = append(cmds, a.Command)
	}
	var out []string
	for _, c := range cmds {
		words, err := shlex.Split(c)
		if err != nil {
			continue
		}
		for _, w := range words {
			if !strings.Contains(w, "/") {
				continue
			}
			if !filepath.IsAbs(w) {
				w = filepath.Join(l.Dir, w)
			}
			w = filepath.Clean(w)
			if _, err := os.Stat(w); err == nil && !sandbox.Within(w, filepath.Clean(l.Dir)) {
				out = append(out, w)
			}
		}
	}
	return out
}

// Shown are the paths outside the loop folder an agent run of l sees
// read-only besides its manifest: the repository the engine commits to.
func Shown(l *spec.Loop) []string {
	if g := GitDir(l); g != "" {
		return []string{g}
	}
	return nil
}

// ViewOf is the manifest of an agent run of loop l: what it sees of the
// machine, from where and why (for doctor and validate).
func ViewOf(l *spec.Loop) sandbox.Manifest {
	return sandbox.BuildManifest(View(l))
}
