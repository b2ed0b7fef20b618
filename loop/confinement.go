// An agent run's confinement as the runner keeps it: confine.ForRun's
// result put in force (its layers, its git guard), the run's cgroup, the
// sweep of what a run left, the processes a crashed engine's run left
// (KillOrphans) and the holdout files put back when the engine closes.

package loop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// confinement resolves the loop's sandbox for the next run
// (confine.ForRun) and returns how to wrap an agent's command, or nil when
// the user turned the sandbox off; it keeps the run's layers and .git's
// guard.
func (r *runner) confinement(files []guard.File, phase string) (func(string, []string) (string, []string, []string, error), error) {
	lay, _ := slotLayer(r.dir, r.slot)
	c, err := confine.ForRun(confine.Request{
		Loop: r.spec(), Dir: r.dir, Priv: r.priv, Slot: r.slot, Layer: lay, Phase: phase,
		// A run starts with none in flight: the network's count of refused
		// hosts starts again.
		Fresh:    len(r.st.InFlightMore) == 0 && (r.st.InFlight == nil || r.st.InFlight.Run == ""),
		ReadOnly: func() []string { return r.guard.ReadOnly(files) },
		Links:    func() []string { return r.guard.Links(files) },
		Holdouts: r.judge(), Net: &r.net, Emit: r.emit, Confined: r.confined,
	})
	if c == nil {
		return nil, err
	}
	r.layer, r.trees = c.Layer, c.Trees
	if c.GuardsGit {
		r.gitGuard = c.GitGuard
	}
	if c.NotVerified != "" {
		r.st.addNotVerified(c.NotVerified)
	}
	return c.Wrap, err
}

// confined records the sandbox in force when it changes.
func (r *runner) confined(what string) {
	kind, _, _ := strings.Cut(what, " ")
	if kind != r.sandbox {
		r.sandbox = kind
		r.emit(record.Event{Event: record.Warning, Kind: "sandbox", Message: "agent runs are confined by: " + what})
	}
}

// KillOrphans kills what is left of a crashed run's agent
// (confine.KillOrphans: its cgroup, its process group's processes that
// carry this loop's LOOPRINTER_DIR). It returns the pids it killed.
func KillOrphans(dir string, st *State) []int {
	if st == nil {
		return nil
	}
	return confine.KillOrphans(dir, st.AgentCgroup, st.AgentPGID)
}

// runCgroup makes the cgroup of the next agent run (confine.RunCgroup),
// nil where the machine gives none.
func (r *runner) runCgroup(seq int) *sandbox.Cgroup {
	g := confine.RunCgroup(seq)
	r.groups.Lock()
	if g == nil {
		r.groups.ungrouped = true
	} else {
		r.groups.live = append(r.groups.live, g)
	}
	r.groups.Unlock()
	if g == nil {
		return nil
	}
	r.st.AgentCgroup = g.Path
	return g
}

// endCgroup ends what is left in the last run's cgroup and removes it
// (confine.EndCgroup).
func (r *runner) endCgroup(g *sandbox.Cgroup) {
	if g == nil {
		return
	}
	r.groups.Lock()
	r.groups.live = slices.DeleteFunc(r.groups.live, func(l *sandbox.Cgroup) bool { return l == g })
	r.groups.Unlock()
	confine.EndCgroup(g, r.sandbox, r.emit)
	r.st.AgentCgroup = ""
}

// sweep ends every process the last agent runs left behind
// (confine.Sweep): from their cgroups' lists when each had one, else by a
// walk of the process tree.
func (r *runner) sweep() {
	r.groups.Lock()
	groups := slices.Clone(r.groups.live)
	if r.groups.ungrouped {
		groups = nil
	}
	r.groups.ungrouped = false
	r.groups.Unlock()
	confine.Sweep(r.sandbox, r.emit, groups...)
}

// putHoldoutsBack returns the holdout files the engine kept out of the
// loop folder while it ran.
func (r *runner) putHoldoutsBack() {
	if err := judge.RestoreHoldouts(r.dir); err != nil {
		r.emit(record.Event{Event: record.Warning, Kind: "holdout", Message: fmt.Sprintf("cannot put the holdout files back in the loop folder: they stay in %s (the next run puts them back): %v", loopdir.PrivateOf(r.dir).HoldoutFiles(), err)})
	}
}
