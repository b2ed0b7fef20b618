package loopdir

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// What agents wrote outside the loop folder is kept in the engine's
// private folder: the copy-on-write layers over HOME and the caches
// (layers/tree-*), the layer over the loop folder while a run is judged
// (layers/loop), and the private HOME and caches where no layer can be
// made (home, cache). Usage says how much disk they take, cheaply: it is
// measured by a bounded walk and kept for a while in usage.json.

// UsageFresh is how long a measured usage is kept before a reader
// measures again.
const UsageFresh = 5 * time.Minute

// usageWalk bounds one measure: past this many files and folders it stops
// and says the figure is a lower bound.
var usageWalk = 200_000

// Usage is the disk the agents' trees of a private folder take.
type Usage struct {
	// Bytes is their disk use (allocated blocks, as du counts); Trees the
	// same per tree, by its name in the private folder.
	Bytes int64            `json:"bytes"`
	Trees map[string]int64 `json:"trees,omitempty"`
	// Partial says the walk stopped at its bound: at least Bytes.
	Partial bool      `json:"partial,omitempty"`
	At      time.Time `json:"at"`
}

// usageFile keeps the last measure.
func (p Private) usageFile() string { return p.join("usage.json") }

// AgentTrees are the folders of the private folder that hold what agents
// wrote outside the loop folder (those that exist), by name.
func (p Private) AgentTrees() map[string]string {
	out := map[string]string{}
	ents, _ := os.ReadDir(p.join("layers"))
	for _, e := range ents {
		if e.IsDir() {
			out["layers/"+e.Name()] = filepath.Join(string(p), "layers", e.Name())
		}
	}
	for _, name := range []string{"home", "cache"} {
		if fi, err := os.Lstat(p.join(name)); err == nil && fi.IsDir() {
			out[name] = p.join(name)
		}
	}
	return out
}

// Usage is the agents' trees' disk use: the last measure when it is
// younger than fresh, else measured now (and kept, when the private
// folder exists).
func (p Private) Usage(fresh time.Duration) Usage {
	if data, err := os.ReadFile(p.usageFile()); err == nil {
		var u Usage
		if json.Unmarshal(data, &u) == nil && time.Since(u.At) < fresh && !u.At.After(time.Now().Add(time.Minute)) {
			return u
		}
	}
	u := p.MeasureUsage()
	if fi, err := os.Stat(string(p)); err == nil && fi.IsDir() {
		if data, err := json.Marshal(u); err == nil {
			tmp := p.usageFile() + ".tmp"
			if os.WriteFile(tmp, data, 0o600) == nil {
				os.Rename(tmp, p.usageFile())
			}
		}
	}
	return u
}

// MeasureUsage walks the agents' trees (at most usageWalk entries in all)
// and sums their disk use.
func (p Private) MeasureUsage() Usage {
	u := Usage{Trees: map[string]int64{}, At: time.Now().UTC()}
	left := usageWalk
	trees := p.AgentTrees()
	names := make([]string, 0, len(trees))
	for n := range trees {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var sum int64
		filepath.WalkDir(trees[name], func(path string, d fs.DirEntry, err error) error {
			if left <= 0 {
				u.Partial = true
				return filepath.SkipAll
			}
			left--
			if err != nil {
				return nil // unreadable: skipped (overlayfs' work folder)
			}
			if fi, err := d.Info(); err == nil {
				sum += diskUse(fi)
			}
			return nil
		})
		u.Trees[name] = sum
		u.Bytes += sum
	}
	return u
}

// FreeAgentTrees removes the agents' trees of the private folder (what a
// finished loop's agents wrote to HOME and the caches, a layer left
// behind) and returns the disk they took. dryRun only measures. The
// caller makes sure no run of the loop is going on.
func (p Private) FreeAgentTrees(dryRun bool) (int64, error) {
	u := p.MeasureUsage()
	if dryRun || len(u.Trees) == 0 {
		return u.Bytes, nil
	}
	var firstErr error
	for _, path := range p.AgentTrees() {
		if err := removeTree(path); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	os.Remove(p.usageFile())
	return u.Bytes, firstErr
}

// removeTree is os.RemoveAll that first makes folders writable to their
// owner (overlayfs leaves a mode 000 folder in its work folder).
func removeTree(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// Orphans are the private folders under the state root root that no loop
// folder in dirs owns (a loop removed from the registry, a folder moved
// away), each with the agents' trees it still holds.
func Orphans(root string, dirs []string) []Private {
	owned := map[string]bool{}
	for _, d := range dirs {
		owned[string(PrivateUnder(root, d))] = true
	}
	ents, _ := os.ReadDir(filepath.Join(root, "engine"))
	var out []Private
	for _, e := range ents {
		p := Private(filepath.Join(root, "engine", e.Name()))
		if !e.IsDir() || owned[string(p)] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(p.AgentTrees()) > 0 {
			out = append(out, p)
		}
	}
	return out
}
