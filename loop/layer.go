package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

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

// loopLayer is the layer over the loop folder.
func loopLayer(dir string) sandbox.Layer { return layerOf(dir, "loop", dir) }

// layerOf is the layer over target, kept in dir's private folder as name.
func layerOf(dir, name, target string) sandbox.Layer {
	p := loopdir.PrivateOf(dir)
	return sandbox.Layer{Target: target, Upper: p.LayerUpper(name), Work: p.LayerWork(name)}
}

// treeLayers are the layers over the writable trees outside the loop
// folder (HOME, caches, a CLI's own folder): one per tree that is not
// inside another, each named by the tree's path.
func treeLayers(dir string, trees []string) []sandbox.Layer {
	var out []sandbox.Layer
	seen := map[string]bool{}
	for _, t := range trees {
		t = filepath.Clean(t)
		if seen[t] || sandbox.Within(t, filepath.Clean(dir)) {
			continue // named twice, or the loop folder's own layer covers it
		}
		seen[t] = true
		nested := false
		for _, o := range trees {
			if o = filepath.Clean(o); o != t && sandbox.Within(t, o) {
				nested = true
			}
		}
		if nested {
			continue
		}
		h := sha256.Sum256([]byte(t))
		out = append(out, layerOf(dir, "tree-"+hex.EncodeToString(h[:6]), t))
	}
	return out
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

// engineOwned says whether a path of the loop folder is the engine's (an
// agent's change to it is never applied), and why. commits: the engine
// commits to a .git in the loop folder (in a review the fixer commits its
// fixes, and .git is the agent's).
func engineOwned(rel string, commits bool) (string, bool) {
	switch first, _, _ := strings.Cut(rel, "/"); {
	case first == loopdir.RecordsDir:
		return "the engine's records", true
	case first == ".git" && commits:
		return "the repository the engine commits to", true
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
	commits := gitDir(e.spec) != ""
	held := map[string]bool{}
	secrets := map[string]string{}
	changes, err := sandbox.ApplyLayer(*e.layer, func(rel string) bool {
		if e.holdoutPath(e.layer.Upper, rel) {
			held[rel] = true
			return false
		}
		_, owned := engineOwned(rel, commits)
		if !owned {
			if kinds := secretsIn(filepath.Join(e.layer.Upper, filepath.FromSlash(rel)), e.red); kinds != "" {
				secrets[rel] = kinds
				return false
			}
		}
		return !owned
	})
	var tamper []Tamper
	var git []string
	for _, c := range changes {
		if c.Applied {
			continue
		}
		why, owned := engineOwned(c.Path, commits)
		switch {
		case secrets[c.Path] != "":
			tamper = append(tamper, Tamper{File: c.Path, What: "refused: it holds " + secrets[c.Path], Rule: secretRule})
		case held[c.Path] && c.What == "removed" && slices.Contains(e.holdouts, c.Path):
			// The engine's own whiteout: the holdout file stayed hidden.
		case held[c.Path] || e.touchesHoldout(c.Path):
			tamper = append(tamper, Tamper{File: c.Path, What: c.What + " where a holdout file is", Rule: "holdout: the user's hidden tests, never the agent's to see or change"})
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
