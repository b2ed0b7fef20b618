package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// The layer. Under bubblewrap an agent never writes the loop folder, its
// HOME or its caches: each is a copy-on-write layer (sandbox.Layer) whose
// writes land in the engine's private folder. After the run, with every
// process of it gone, the engine applies the loop folder's layer: what the
// agent wrote in .git and working-records/ is discarded, the rest reaches
// the folder and is judged there as before (protected files restored, the
// loop file judged field by field). The layers over HOME and the caches
// are never applied: they persist from run to run of the loop, so an agent
// CLI keeps its sessions and logins, while the checks and the engine's git
// read the user's own HOME and caches, which no agent wrote.

var layerProbe struct {
	sync.Once
	err error
}

// layersWork says whether copy-on-write layers can be made here (probed
// once per process).
func layersWork() error {
	layerProbe.Do(func() { layerProbe.err = sandbox.LayerProbe() })
	return layerProbe.err
}

// loopLayer is the layer over the loop folder.
func loopLayer(dir string) sandbox.Layer {
	d := loopdir.PrivateOf(dir).Layer("loop")
	return sandbox.Layer{Target: dir, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work")}
}

// treeLayers are the layers over the writable trees outside the loop
// folder (HOME, caches, a CLI's own folder): one per tree that is not
// inside another, each named by the tree's path.
func treeLayers(dir string, trees []string) []sandbox.Layer {
	var out []sandbox.Layer
	seen := map[string]bool{}
	for _, t := range trees {
		t = filepath.Clean(t)
		if seen[t] || within(t, dir) {
			continue // named twice, or the loop folder's own layer covers it
		}
		seen[t] = true
		nested := false
		for _, o := range trees {
			if o = filepath.Clean(o); o != t && within(t, o) {
				nested = true
			}
		}
		if nested {
			continue
		}
		h := sha256.Sum256([]byte(t))
		d := loopdir.PrivateOf(dir).Layer("tree-" + hex.EncodeToString(h[:6]))
		out = append(out, sandbox.Layer{Target: t, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work")})
	}
	return out
}

func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// prepareLayers makes the layers' folders. A loop layer that holds what a
// run wrote before the engine died is dropped: that run's work is lost, and
// the loop folder was never touched by it.
func (e *Engine) prepareLayers(layers []sandbox.Layer) error {
	for i, l := range layers {
		left, err := sandbox.PrepareLayer(l)
		if err != nil {
			return fmt.Errorf("cannot prepare the copy-on-write layer over %s: %w", l.Target, err)
		}
		if i == 0 && left {
			if err := sandbox.ClearLayer(l); err != nil {
				return fmt.Errorf("cannot drop the layer a dead run left: %w", err)
			}
			e.emit(record.Event{Event: record.Warning, Kind: "layer_dropped", Message: "the copy-on-write layer of an agent run that died with the engine was dropped: nothing of that run reached the loop folder"})
		}
	}
	return nil
}

// engineOwned says whether a path of the loop folder is the engine's: an
// agent's change to it is never applied.
func (e *Engine) engineOwned(rel string) (string, bool) {
	first, _, _ := strings.Cut(rel, "/")
	switch first {
	case loopdir.RecordsDir:
		return "the engine's records", true
	case ".git":
		if gitDir(e.spec) != "" { // in a review the fixer commits its fixes
			return "the repository the engine commits to", true
		}
	}
	return "", false
}

// endRun ends the watch of a run's changes, after applying its layer (only
// then does what the agent wrote reach the loop folder): what changed,
// what was created, and the layer's discarded changes to the engine's
// records, as tampering.
func (e *Engine) endRun(phase, task string, rc *runChanges) (changed, created []string, tamper []Tamper, err error) {
	tamper, lerr := e.applyLayer(phase, task)
	for _, l := range e.trees {
		// overlayfs leaves a folder of mode 000 in its work folder; nothing
		// is mounted any more.
		if cerr := sandbox.ClearWork(l); cerr != nil && lerr == nil {
			lerr = cerr
		}
	}
	changed, created, err = e.endChanges(rc)
	if lerr != nil {
		err = lerr
	}
	return changed, created, tamper, err
}

// applyLayer applies the loop folder's layer after a run: the engine's own
// paths are discarded (a change to working-records/ is a violation, one to
// .git a warning: agents that commit are common, and the engine alone
// commits), the rest reaches the folder. It returns the discarded changes
// to the records as tampering, for the run's verdict.
func (e *Engine) applyLayer(phase, task string) ([]Tamper, error) {
	if e.layer == nil {
		return nil, nil
	}
	var discarded []sandbox.LayerChange
	changes, err := sandbox.ApplyLayer(*e.layer, func(rel string) bool {
		_, owned := e.engineOwned(rel)
		return !owned
	})
	for _, c := range changes {
		if !c.Applied {
			discarded = append(discarded, c)
		}
	}
	var tamper []Tamper
	var git []string
	for _, c := range discarded {
		why, owned := e.engineOwned(c.Path)
		switch {
		case owned && strings.HasPrefix(c.Path, ".git"):
			git = append(git, c.Path)
		case owned:
			tamper = append(tamper, Tamper{File: c.Path, What: "written in the agent's layer", Rule: why})
		default:
			e.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "layer_discarded", File: c.Path,
				Message: fmt.Sprintf("%s (%s) was not applied to the loop folder: %s", c.Path, c.What, c.Why)})
		}
	}
	if len(git) > 0 {
		e.emit(record.Event{Event: record.Warning, Phase: phase, Task: task, Kind: "git_discarded",
			Message: fmt.Sprintf("the %s run changed %s in its layer; discarded: the engine alone commits, and its history stays as it was", phase, strings.Join(git, ", "))})
	}
	if err != nil {
		return tamper, fmt.Errorf("cannot apply the agent's layer to the loop folder: %w", err)
	}
	return tamper, nil
}
