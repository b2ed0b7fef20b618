package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The layers. Under bubblewrap an agent never writes the loop folder, its
// HOME or its caches: each is a copy-on-write layer (sandbox.Layer) whose
// writes land in the engine's private folder; the engine applies the loop
// folder's layer after the run (loop/layer.go) and never the others.

// LoopLayer is the layer over the loop folder.
func LoopLayer(dir string) sandbox.Layer { return LayerOf(dir, "loop", dir) }

// LayerOf is the layer over target, kept in dir's private folder as name.
func LayerOf(dir, name, target string) sandbox.Layer {
	p := loopdir.PrivateOf(dir)
	return sandbox.Layer{Target: target, Upper: p.LayerUpper(name), Work: p.LayerWork(name)}
}

// TreeLayers are the layers over the writable trees outside the loop
// folder (HOME, caches, a CLI's own folder): one per tree that is not
// inside another, each named by the tree's path.
func TreeLayers(dir string, trees []string, prefix string) []sandbox.Layer {
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
		out = append(out, LayerOf(dir, prefix+hex.EncodeToString(h[:6]), t))
	}
	return out
}

// EngineOwned says whether a path of the loop folder is the engine's (an
// agent's change to it is never applied), and why. commits: the engine
// commits to a .git in the loop folder (in a review the fixer commits its
// fixes, and .git is the agent's).
func EngineOwned(rel string, commits bool) (string, bool) {
	switch first, _, _ := strings.Cut(rel, "/"); {
	case first == loopdir.RecordsDir:
		return "the engine's records", true
	case first == ".git" && commits:
		return "the repository the engine commits to", true
	}
	return "", false
}

// GitHidden says whether a path of the agent's layer is one of the
// repository's paths hidden from the agent, or inside one.
func GitHidden(gh *judge.GitHide, rel string) bool {
	if gh == nil {
		return false
	}
	for _, g := range gh.InTree {
		if rel == g || strings.HasPrefix(rel, g+"/") {
			return true
		}
	}
	return false
}

// TreeOf is the loop folder as a run's change leaves it: the files of
// upper (a copy-on-write layer's upper folder; "" none) over the folder's,
// a whiteout (a character device) hiding the folder's file.
func TreeOf(folder, upper string) judge.Tree {
	read := func(rel string) ([]byte, bool) {
		if upper != "" {
			p := filepath.Join(upper, filepath.FromSlash(rel))
			if fi, err := os.Lstat(p); err == nil {
				if !fi.Mode().IsRegular() {
					return nil, false
				}
				return ReadChange(p)
			}
		}
		return ReadChange(filepath.Join(folder, filepath.FromSlash(rel)))
	}
	list := func(dir string) (files, dirs []string) {
		seen := map[string]bool{}
		for _, root := range []string{upper, folder} {
			if root == "" {
				continue
			}
			ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
			for _, e := range ents {
				n := e.Name()
				if seen[n] {
					continue
				}
				seen[n] = true
				switch {
				case e.Type()&os.ModeCharDevice != 0:
					// a whiteout: the name is gone
				case e.IsDir():
					dirs = append(dirs, n)
				case e.Type().IsRegular():
					files = append(files, n)
				}
			}
		}
		return files, dirs
	}
	return judge.Tree{Read: read, List: list}
}

// PrepareLayers makes the layers' folders. A loop layer (the first) that
// holds what a run wrote before the engine died is dropped: that run's
// work is lost, and the loop folder was never touched by it.
func PrepareLayers(layers []sandbox.Layer, emit func(record.Event)) error {
	for i, l := range layers {
		left, err := sandbox.PrepareLayer(l)
		if err != nil {
			return fmt.Errorf("cannot prepare the copy-on-write layer over %s: %w", l.Target, err)
		}
		if i == 0 && left {
			if err := sandbox.ClearLayer(l); err != nil {
				return fmt.Errorf("cannot drop the layer a dead run left: %w", err)
			}
			emit(record.Event{Event: record.Warning, Kind: "layer_dropped", Message: "the copy-on-write layer of an agent run that died with the engine was dropped: nothing of that run reached the loop folder"})
		}
	}
	return nil
}

// ResumeApply finishes the apply of the loop folder's layer that the
// engine died in the middle of (its journal says what was decided and what
// was done), for the layer of each slot (slot: the layer of the loop
// folder dir in slot k and its apply's journal): the folder gets all of
// that run's judged changes, never a part of them, and the run is then
// judged like any run that died.
func ResumeApply(dir string, slot func(dir string, k int) (sandbox.Layer, string), emit func(record.Event)) error {
	for k := 0; k < spec.MaxParallel; k++ {
		l, journal := slot(dir, k)
		changes, found, err := sandbox.ResumeApply(l, journal)
		if !found {
			if err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot finish applying the layer of the run that died with the engine: %w", err)
		}
		n := 0
		for _, c := range changes {
			if c.Applied {
				n++
			}
		}
		what := fmt.Sprintf("%d paths", n)
		if n == 1 {
			what = "1 path"
		}
		emit(record.Event{Event: record.Warning, Kind: "layer_apply_finished", Message: fmt.Sprintf("the engine died while applying an agent run's layer to the loop folder: the apply was finished now (%s), and the run is judged as one that died", what)})
	}
	return nil
}
