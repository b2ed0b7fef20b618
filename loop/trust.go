package loop

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// The trust boundary. An agent run may be hostile: everything it can write
// is forged until the engine has judged it. The engine therefore keeps its
// verdict's inputs where no agent can write (its private folder), runs every
// agent confined (sandbox), ends every process a run started before it looks
// at the files, and judges a run that died with the engine exactly like a
// live one. docs/design.md explains the whole of it.

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
	confine.EndCgroup(g, r.sandbox, r.emit)
	r.st.AgentCgroup = ""
}

// sweep ends every process the last agent run left behind
// (confine.Sweep).
func (r *runner) sweep() { confine.Sweep(r.sandbox, r.emit) }

// keepEdit decides about an edited protected file that may keep a change:
// the loop file (judged field by field) and test-runner configuration that
// also holds other settings (an edit outside the test section stays).
func (r *runner) keepEdit(rel string, old, cur []byte) (bool, string) {
	if filepath.Join(r.dir, filepath.FromSlash(rel)) == r.spec().Path {
		return r.keepLoopFileEdit(rel, old, cur)
	}
	return guard.KeepTestConfigEdit(rel, old, cur)
}

// judgeDeadRun judges an agent run that was under way when the engine died
// (killed, out of memory, power loss), exactly as a live run is judged:
// what it reported is counted, the protected files are compared with the
// on-disk snapshot and restored, and plan marks no live engine judged are
// taken back, so the task runs again.
func (r *runner) judgeDeadRun() error {
	f := r.st.InFlight
	a := r.spec().AgentFor(f.Phase, f.Post)
	if ad, err := agent.Lookup(a.Backend); err == nil && f.Transcript != "" {
		req := agent.Request{Phase: f.Phase, Task: f.Task, Dir: r.dir, Backend: a.Backend, Model: a.Model, Prices: prices(r.spec().Prices), Transcript: f.Transcript}
		res := agent.ParseTranscript(req, ad)
		r.deadRunTimes(f, &res)
		r.st.CostUSD += res.CostUSD
		r.endRecord(f.Phase, f.Task, a, res, nil)
	}
	var problems []string
	// The protected files against the snapshot on disk; what the run
	// created is not known: every protected file the snapshot lacks counts.
	tamper, err := r.guard.RestoreSaved()
	r.recordTamper(f.Phase, f.Task, tamper)
	if err != nil {
		return err
	}
	if len(tamper) > 0 {
		problems = append(problems, tamperNote(tamper))
	}
	if r.spec().Shape == "cycle" {
		problems = append(problems, r.enforceJudgedPlan(f.Task, "the "+f.Phase+" run that died with the engine")...)
	}
	if len(problems) > 0 {
		r.st.LastFailure = strings.Join(problems, "\n")
		r.deadFailed = append(r.deadFailed, f.Task)
	}
	r.st.InFlight = nil
	return r.store.checkpoint()
}

// putHoldoutsBack returns the holdout files the engine kept out of the
// loop folder while it ran.
func (r *runner) putHoldoutsBack() {
	if err := judge.RestoreHoldouts(r.dir); err != nil {
		r.emit(record.Event{Event: record.Warning, Kind: "holdout", Message: fmt.Sprintf("cannot put the holdout files back in the loop folder: they stay in %s (the next run puts them back): %v", loopdir.PrivateOf(r.dir).HoldoutFiles(), err)})
	}
}
