package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The trust boundary. An agent run may be hostile: everything it can write
// is forged until the engine has judged it. The engine therefore keeps its
// verdict's inputs where no agent can write (its private folder), runs every
// agent confined (sandbox), ends every process a run started before it looks
// at the files, and judges a run that died with the engine exactly like a
// live one. docs/design.md explains the whole of it.

// confinement resolves the loop's sandbox and returns how to wrap an agent's
// command, or nil when the user turned the sandbox off.
// The auditor gets HOME and cache layers of its own, emptied before each
// audit (so it starts from the user's HOME and never loads what a builder
// planted in its layer: ~/.claude/CLAUDE.md and the like); so does the
// chooser of a best-of (retry.choose: review).
func (r *runner) confinement(files []guard.File, phase string) (func(string, []string) (string, []string, []string, error), error) {
	p, err := confine.Policy(r.spec(), nil)
	if err != nil {
		return nil, err
	}
	p.Slot = r.slot
	p.View, p.Shown = confine.View(r.spec()), confine.Shown(r.spec())
	r.layer, r.trees = nil, nil
	// A run starts with none in flight: the network's count of refused
	// hosts starts again.
	fresh := len(r.st.InFlightMore) == 0 && (r.st.InFlight == nil || r.st.InFlight.Run == "")
	r.writeSecrets()
	if p.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil {
		// HOME's layer shows only the CLIs' folders and the toolchains.
		p.HomeMask = true
		// One mount over the loop folder, whatever the number of protected
		// files: they are judged when the layer is applied.
		lay, _ := slotLayer(r.dir, r.slot)
		prefix := "tree-"
		if phase == "auditor" || phase == spec.PhaseChooser {
			prefix = phase + "-tree-"
		}
		if r.slot > 0 {
			// Runs at once never share an upper folder (overlayfs refuses
			// it): each slot has its own HOME and cache layers.
			prefix = fmt.Sprintf("slot%d-%s", r.slot+1, prefix)
		}
		r.trees = confine.TreeLayers(r.dir, p.Writable, prefix)
		p.Layers = append([]sandbox.Layer{lay}, r.trees...)
		if err := confine.PrepareLayers(p.Layers, r.emit); err != nil {
			return nil, err
		}
		if phase == "auditor" || phase == spec.PhaseChooser {
			for _, l := range r.trees {
				if err := sandbox.ClearLayer(l); err != nil {
					return nil, fmt.Errorf("cannot empty the %s's HOME layer: %w", phase, err)
				}
			}
		}
		if err := sandbox.HideInLayer(lay, r.judge().Holdouts()); err != nil {
			return nil, fmt.Errorf("cannot hide the holdout files from the agent: %w", err)
		}
		// Out of the folder while the engine runs: no agent of another
		// loop reads them by their path either.
		if err := r.judge().KeepHoldouts(); err != nil {
			return nil, fmt.Errorf("cannot keep the holdout files in the engine's private folder: %w", err)
		}
		if gh := r.judge().HiddenGit(); gh != nil {
			// git holds holdout files: the agent sees no repository.
			if err := confine.HideGit(lay, gh); err != nil {
				return nil, fmt.Errorf("cannot hide the repository (it holds the holdout files) from the agent: %w", err)
			}
		}
		// The engine's state folder is hidden, not only read-only: every
		// loop's private folder (holdout check logs, HOME layers where CLI
		// logins live) reads as empty. The loop's own layers are mounted
		// before, so they stay in force.
		p.Hidden = append(p.Hidden, loopdir.Private(r.priv).HoldoutChecks())
		p.Hidden = append(p.Hidden, confine.ReadOnlyAround(loopdir.StateRoot(), r.dir)...)
		if err := r.net.Confine(&p, r.spec(), r.dir, fresh); err != nil {
			return nil, err
		}
		if gh := r.judge().HiddenGit(); gh != nil {
			// After the network's masks, which replace the list.
			p.Masked = append(append(p.Masked, gh.Dirs...), gh.Files...)
		}
		p.Masked = append(p.Masked, confine.OtherSecrets(r.dir)...)
		r.layer = &lay
		r.confined(p.Kind + " with copy-on-write layers")
		return p.Wrap, nil
	}
	if len(r.judge().Holdouts()) > 0 {
		return nil, r.judge().HoldoutReady(false)
	}
	// The run writes the loop folder in place: the clean room will compare
	// the dependency folders with their listing before the first such run.
	if err := r.judge().Pristine().Listing(); err != nil {
		return nil, fmt.Errorf("cannot list the dependency folders before a run that writes the loop folder in place: %w", err)
	}
	var roFiles []string
	if p.Kind != sandbox.Landlock {
		roFiles = r.guard.ReadOnly(files)
	}
	switch what := p.Kind; p.Kind {
	case sandbox.Off:
		r.confined(what)
		r.st.addNotVerified("sandbox: off — agent runs were not confined, so an agent could reach the engine's files and checks while it ran; the verdict holds only against an honest agent")
		return nil, nil
	case sandbox.Bwrap:
		what += " (no copy-on-write layer here: " + sandbox.LayerProbe().Error() + "; protected files are bound read-only one by one; a private HOME)"
		r.confined(what)
	case sandbox.Landlock:
		// Landlock only grants: another loop's records or ignored files
		// inside the loop folder cannot be kept from the agent, so the
		// run does not start while there are any.
		if in := confine.SecretsInReach(r.dir); len(in) > 0 {
			return nil, fmt.Errorf("under sandbox: landlock the agent writes the loop folder in place, and Landlock cannot keep a path inside it unreadable: %s (another loop's records or files git ignores there, such as its holdout files) would be in the agent's reach; use sandbox: bwrap (it masks them), or move that loop out of this folder", confine.ListSome(in, 3))
		}
		r.confined(what + " (a private HOME)")
		// .git's control files, snapshot here and put back after the run
		// (confine.GuardGit).
		r.gitGuard = nil
		gg, err := confine.GuardGit(r.priv, r.dir)
		if err != nil {
			return nil, err
		}
		r.gitGuard = gg
		// Landlock cannot keep a file inside the loop folder read-only
		// (the check after the run restores it): of the protected files it
		// needs only the links, whose targets it keeps read-only.
		roFiles = r.guard.Links(files)
	default:
		// Seatbelt: HOME stays the user's (a macOS CLI keeps its login in
		// the keychain, under the real HOME).
		r.confined(what)
		p.ReadOnly = append(p.ReadOnly, roFiles...)
		return p.Wrap, nil
	}
	// No layer over HOME and the caches: the agent gets private ones, and
	// the real ones are read-only to it.
	home, err := confine.AgentHome(r.priv, r.spec().Agent.Env)
	if err != nil {
		return nil, err
	}
	if p, err = confine.Policy(r.spec(), nil, home.Writable...); err != nil {
		return nil, err
	}
	p.Slot = r.slot
	p.View, p.Shown = confine.View(r.spec()), confine.Shown(r.spec())
	p.Writable = home.Writable
	p.ReadOnly = append(p.ReadOnly, roFiles...)
	if err := r.net.Confine(&p, r.spec(), r.dir, fresh); err != nil {
		return nil, err
	}
	p.Masked = append(p.Masked, confine.OtherSecrets(r.dir)...)
	return func(path string, args []string) (string, []string, []string, error) {
		np, na, env, err := p.Wrap(path, args)
		return np, na, append(env, home.Env...), err
	}, nil
}

// confined records the sandbox in force when it changes.
func (r *runner) confined(what string) {
	kind, _, _ := strings.Cut(what, " ")
	if kind != r.sandbox {
		r.sandbox = kind
		r.emit(record.Event{Event: record.Warning, Kind: "sandbox", Message: "agent runs are confined by: " + what})
	}
}

// KillOrphans kills what is left of a crashed run's agent: every process
// of the run's cgroup, where it had one (the kernel's list: nothing in it
// could leave), and the processes of its process group that carry this
// loop's LOOPRINTER_DIR. It returns the pids it killed.
func KillOrphans(dir string, st *State) []int {
	if st == nil {
		return nil
	}
	var killed []int
	if st.AgentCgroup != "" {
		pids, _ := sandbox.EndCgroup(st.AgentCgroup)
		killed = append(killed, pids...)
	}
	if st.AgentPGID != 0 {
		killed = append(killed, killOrphans(st.AgentPGID, dir)...)
	}
	return killed
}

// pruneCgroups removes, once per process, the empty cgroups that killed
// engines left.
var pruneCgroups sync.Once

// runCgroup makes the cgroup of the next agent run, where the machine
// gives one; nil where it does not (doctor says what is then not
// guaranteed).
func (r *runner) runCgroup(seq int) *sandbox.Cgroup {
	pruneCgroups.Do(func() { sandbox.PruneCgroups() })
	g, err := sandbox.NewCgroup(fmt.Sprintf("%d-%d", os.Getpid(), seq))
	if err != nil {
		return nil
	}
	r.st.AgentCgroup = g.Path
	return g
}

// endCgroup ends what is left in the last run's cgroup (after the sweep,
// only what had left this process's tree) and removes it.
func (r *runner) endCgroup(g *sandbox.Cgroup) {
	if g == nil {
		return
	}
	pids, err := g.End()
	if len(pids) > 0 && r.sandbox != sandbox.Bwrap {
		r.emit(record.Event{Event: record.Warning, Message: fmt.Sprintf("stopped %s of the agent run's cgroup that had left its process tree", plural(len(pids), "process"))})
	}
	if err != nil {
		r.emit(record.Event{Event: record.Warning, Message: "the agent run's cgroup: " + err.Error()})
	}
	r.st.AgentCgroup = ""
}

// sweep ends every process the last agent run left behind (a daemon it
// started with setsid, a double fork): none may touch the files while they
// are judged. Under bwrap the run's PID namespace already ended them.
func (r *runner) sweep() {
	// Under bwrap the sweep only reaps what the sandbox's own teardown left
	// to this process (a subreaper); elsewhere what it kills was escaping.
	if n := sandbox.Sweep(); len(n) > 0 && r.sandbox != sandbox.Bwrap {
		r.emit(record.Event{Event: record.Warning, Message: fmt.Sprintf("stopped %d processes the agent run left behind", len(n))})
	}
}

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

// writeSecrets notes, in the loop's private folder, what of it no other
// loop's agent may read (its records, its holdout files); a failure is a
// warning: the loop's own agents are confined as ever.
func (r *runner) writeSecrets() {
	if err := loopdir.Dir(r.dir).WriteSecrets(r.judge().Holdouts()); err != nil {
		r.emit(record.Event{Event: record.Warning, Kind: "secrets", Message: "cannot note the loop's records and holdout files for other loops' sandboxes to hide: " + err.Error()})
	}
}

// putHoldoutsBack returns the holdout files the engine kept out of the
// loop folder while it ran.
func (r *runner) putHoldoutsBack() {
	if err := judge.RestoreHoldouts(r.dir); err != nil {
		r.emit(record.Event{Event: record.Warning, Kind: "holdout", Message: fmt.Sprintf("cannot put the holdout files back in the loop folder: they stay in %s (the next run puts them back): %v", loopdir.PrivateOf(r.dir).HoldoutFiles(), err)})
	}
}
