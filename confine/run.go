package confine

import (
	"fmt"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The confinement of one agent run, put together here from this
// package's parts: the runner (loop/trust.go) asks for it before each
// run and keeps what it returns.

// Holdouts is what a run's confinement needs of the judge (judge.Judge):
// the holdout files, hidden in the run's layer and kept out of the folder,
// the repository hidden when git holds them, and the clean room's listing
// of the dependency folders before a run that writes the folder in place.
type Holdouts interface {
	Holdouts() []string
	KeepHoldouts() error
	HiddenGit() *judge.GitHide
	HoldoutReady(layered bool) error
	Pristine() *judge.Pristine
}

// Request is what the confinement of one agent run is made from.
type Request struct {
	Loop *spec.Loop // the loop file in force
	Dir  string     // the loop folder
	Priv string     // the engine's private folder for the loop
	// Slot is the run's slot (0 but in a wave) and Layer the slot's layer
	// over the loop folder: runs at once never share an upper folder.
	Slot  int
	Layer sandbox.Layer
	// Phase is the run's phase: the auditor and a best-of's chooser get
	// HOME and cache layers of their own, emptied before each run.
	Phase string
	// Fresh: the run starts with none in flight, and the network's count
	// of refused hosts starts again.
	Fresh bool
	// ReadOnly are the protected files, bound read-only one by one where
	// no layer covers the loop folder; Links, of them, the links whose
	// targets Landlock keeps read-only. Each is asked only where it is used.
	ReadOnly, Links func() []string
	Holdouts        Holdouts
	Net             *Network // the loop's network
	Emit            func(record.Event)
	// Confined is told the sandbox in force, before what follows it is
	// done (loop/trust.go: the warning when it changes).
	Confined func(what string)
}

// Run is a run's confinement: the wrap of its agent's command (nil under
// sandbox: off) and what the runner keeps of it until the run is judged.
type Run struct {
	Wrap func(string, []string) (string, []string, []string, error)
	// Layer is the copy-on-write layer over the loop folder (nil without
	// one), Trees the layers over HOME and the caches, never applied.
	Layer *sandbox.Layer
	Trees []sandbox.Layer
	// GitGuard is the snapshot of .git's control files taken before a
	// Landlock run; GuardsGit says the run decided it (nil or not), and
	// the runner's one from before is replaced.
	GitGuard  *sandbox.GitGuard
	GuardsGit bool
	// NotVerified is the note the verdict carries (sandbox: off).
	NotVerified string
}

// NotConfined is the NOT VERIFIED note of a loop whose agent runs are not
// confined.
const NotConfined = "sandbox: off — agent runs were not confined, so an agent could reach the engine's files and checks while it ran; the verdict holds only against an honest agent"

// ForRun resolves the loop's sandbox for one agent run and returns how
// to wrap its agent's command and what to keep. It returns nil when the
// loop's sandbox cannot be resolved (nothing was decided); with another
// error, what was decided before it.
func ForRun(req Request) (*Run, error) {
	l, h := req.Loop, req.Holdouts
	p, err := Policy(l, nil)
	if err != nil {
		return nil, err
	}
	p.Slot = req.Slot
	p.View, p.Shown = View(l), Shown(l)
	run := &Run{}
	writeSecrets(req)
	if p.Kind == sandbox.Bwrap && sandbox.LayerProbe() == nil {
		// HOME's layer shows only the CLIs' folders and the toolchains.
		p.HomeMask = true
		// The agent starts in the loop's run box (one bubblewrap and
		// helper per loop and view, not per run).
		p.Box = true
		// One mount over the loop folder, whatever the number of protected
		// files: they are judged when the layer is applied.
		lay := req.Layer
		prefix := "tree-"
		if req.Phase == "auditor" || req.Phase == spec.PhaseChooser {
			prefix = req.Phase + "-tree-"
		}
		if req.Slot > 0 {
			// Runs at once never share an upper folder (overlayfs refuses
			// it): each slot has its own HOME and cache layers.
			prefix = fmt.Sprintf("slot%d-%s", req.Slot+1, prefix)
		}
		run.Trees = TreeLayers(req.Dir, p.Writable, prefix)
		p.Layers = append([]sandbox.Layer{lay}, run.Trees...)
		if err := PrepareLayers(p.Layers, req.Emit); err != nil {
			return run, err
		}
		if req.Phase == "auditor" || req.Phase == spec.PhaseChooser {
			for _, tl := range run.Trees {
				if err := sandbox.ClearLayer(tl); err != nil {
					return run, fmt.Errorf("cannot empty the %s's HOME layer: %w", req.Phase, err)
				}
			}
		}
		if err := sandbox.HideInLayer(lay, h.Holdouts()); err != nil {
			return run, fmt.Errorf("cannot hide the holdout files from the agent: %w", err)
		}
		// Out of the folder while the engine runs: no agent of another
		// loop reads them by their path either.
		if err := h.KeepHoldouts(); err != nil {
			return run, fmt.Errorf("cannot keep the holdout files in the engine's private folder: %w", err)
		}
		if gh := h.HiddenGit(); gh != nil {
			// git holds holdout files: the agent sees no repository.
			if err := HideGit(lay, gh); err != nil {
				return run, fmt.Errorf("cannot hide the repository (it holds the holdout files) from the agent: %w", err)
			}
		}
		// The engine's state folder is hidden, not only read-only: every
		// loop's private folder (holdout check logs, HOME layers where CLI
		// logins live) reads as empty. The loop's own layers are mounted
		// before, so they stay in force.
		p.Hidden = append(p.Hidden, loopdir.Private(req.Priv).HoldoutChecks())
		p.Hidden = append(p.Hidden, ReadOnlyAround(loopdir.StateRoot(), req.Dir)...)
		if err := req.Net.Confine(&p, l, req.Dir, req.Fresh); err != nil {
			return run, err
		}
		if gh := h.HiddenGit(); gh != nil {
			// After the network's masks, which replace the list.
			p.Masked = append(append(p.Masked, gh.Dirs...), gh.Files...)
		}
		p.Masked = append(p.Masked, OtherSecrets(req.Dir)...)
		run.Layer = &lay
		req.Confined(p.Kind + " with copy-on-write layers")
		run.Wrap = p.Wrap
		return run, nil
	}
	if len(h.Holdouts()) > 0 {
		return run, h.HoldoutReady(false)
	}
	// The run writes the loop folder in place: the clean room will compare
	// the dependency folders with their listing before the first such run.
	if err := h.Pristine().Listing(); err != nil {
		return run, fmt.Errorf("cannot list the dependency folders before a run that writes the loop folder in place: %w", err)
	}
	var roFiles []string
	if p.Kind != sandbox.Landlock {
		roFiles = req.ReadOnly()
	}
	switch what := p.Kind; p.Kind {
	case sandbox.Off:
		req.Confined(what)
		run.NotVerified = NotConfined
		return run, nil
	case sandbox.Bwrap:
		what += " (no copy-on-write layer here: " + sandbox.LayerProbe().Error() + "; protected files are bound read-only one by one; a private HOME)"
		req.Confined(what)
	case sandbox.Landlock:
		// Landlock only grants: another loop's records or ignored files
		// inside the loop folder cannot be kept from the agent, so the
		// run does not start while there are any.
		if in := SecretsInReach(req.Dir); len(in) > 0 {
			return run, fmt.Errorf("under sandbox: landlock the agent writes the loop folder in place, and Landlock cannot keep a path inside it unreadable: %s (another loop's records or files git ignores there, such as its holdout files) would be in the agent's reach; use sandbox: bwrap (it masks them), or move that loop out of this folder", ListSome(in, 3))
		}
		req.Confined(what + " (a private HOME)")
		// .git's control files, snapshot here and put back after the run
		// (GuardGit).
		run.GuardsGit = true
		gg, err := GuardGit(req.Priv, req.Dir)
		if err != nil {
			return run, err
		}
		run.GitGuard = gg
		// Landlock cannot keep a file inside the loop folder read-only
		// (the check after the run restores it): of the protected files it
		// needs only the links, whose targets it keeps read-only.
		roFiles = req.Links()
	default:
		// Seatbelt: HOME stays the user's (a macOS CLI keeps its login in
		// the keychain, under the real HOME).
		req.Confined(what)
		p.ReadOnly = append(p.ReadOnly, roFiles...)
		run.Wrap = p.Wrap
		return run, nil
	}
	// No layer over HOME and the caches: the agent gets private ones, and
	// the real ones are read-only to it.
	home, err := AgentHome(req.Priv, l.Agent.Env)
	if err != nil {
		return run, err
	}
	if p, err = Policy(l, nil, home.Writable...); err != nil {
		return run, err
	}
	p.Slot = req.Slot
	p.View, p.Shown = View(l), Shown(l)
	p.Writable = home.Writable
	p.ReadOnly = append(p.ReadOnly, roFiles...)
	if err := req.Net.Confine(&p, l, req.Dir, req.Fresh); err != nil {
		return run, err
	}
	p.Masked = append(p.Masked, OtherSecrets(req.Dir)...)
	run.Wrap = func(path string, args []string) (string, []string, []string, error) {
		np, na, env, err := p.Wrap(path, args)
		return np, na, append(env, home.Env...), err
	}
	return run, nil
}

// writeSecrets notes, in the loop's private folder, what of it no other
// loop's agent may read (its records, its holdout files); a failure is a
// warning: the loop's own agents are confined as ever.
func writeSecrets(req Request) {
	if err := loopdir.Dir(req.Dir).WriteSecrets(req.Holdouts.Holdouts()); err != nil {
		req.Emit(record.Event{Event: record.Warning, Kind: "secrets", Message: "cannot note the loop's records and holdout files for other loops' sandboxes to hide: " + err.Error()})
	}
}
