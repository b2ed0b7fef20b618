package ops

import (
	"fmt"
	"path/filepath"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// PrivateUse is what a loop's agents wrote outside its folder (its HOME
// and cache layers, kept in the engine's private folder) against the loop
// file's private_budget.
type PrivateUse struct {
	Folder  string `json:"folder"`
	Bytes   int64  `json:"bytes"`
	Partial bool   `json:"partial,omitempty"` // at least Bytes: the walk stopped at its bound
	Budget  int64  `json:"budget"`
	Warning string `json:"warning,omitempty"`
}

// PrivateUseOf measures a loop's private folder (a measure younger than
// loopdir.UsageFresh is reused) and words a warning when it is over its
// budget.
func PrivateUseOf(e Entry) PrivateUse {
	p := loopdir.PrivateOf(RunDirOf(e))
	u := p.Usage(loopdir.UsageFresh)
	budget, _ := spec.ParseSize(spec.DefaultPrivateBudget)
	if l, err := spec.Load(e.LoopFile); err == nil {
		budget = l.PrivateBudgetBytes()
	}
	pu := PrivateUse{Folder: string(p), Bytes: u.Bytes, Partial: u.Partial, Budget: budget}
	if u.Bytes > budget {
		at := ""
		if u.Partial {
			at = "at least "
		}
		pu.Warning = fmt.Sprintf("the agents' HOME and caches take %s%s in the engine's private folder, over private_budget (%s): `looprinter gc` frees them once the loop is finished",
			at, Bytes(u.Bytes), Bytes(budget))
	}
	return pu
}

// Bytes words a size in binary units.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// GCItem is one private folder `looprinter gc` looked at.
type GCItem struct {
	Loop   string `json:"loop,omitempty"` // "" for a folder no registered loop owns
	Folder string `json:"folder"`
	Bytes  int64  `json:"bytes"`
	Freed  bool   `json:"freed"`
	Why    string `json:"why,omitempty"` // why it was kept
	Error  string `json:"error,omitempty"`
}

// GC frees what finished loops no longer need: the agents' HOME and cache
// layers (and a layer a dead run left) in their private folders. A loop
// that runs, waits, is paused, was interrupted (it can be resumed) or
// crashed keeps them. Private folders no registered loop owns are listed,
// not freed: a loop run without the registry may still use one. dryRun
// frees nothing and says what would be freed.
func GC(dryRun bool) ([]GCItem, error) {
	entries, err := Entries()
	if err != nil {
		return nil, err
	}
	var out []GCItem
	var dirs []string
	for _, e := range entries {
		dir := RunDirOf(e)
		dirs = append(dirs, dir)
		p := loopdir.PrivateOf(dir)
		if len(p.AgentTrees()) == 0 {
			continue
		}
		it := GCItem{Loop: e.Name, Folder: string(p)}
		s := Inspect(e)
		if s.State != StateFinished && s.State != StateGone {
			it.Bytes = p.Usage(loopdir.UsageFresh).Bytes
			it.Why = "the loop is " + s.State + ": its agents may need their HOME again"
			out = append(out, it)
			continue
		}
		if live, _ := loopdir.Locked(dir); live {
			it.Why = "a run holds the loop"
			out = append(out, it)
			continue
		}
		it.Bytes, err = p.FreeAgentTrees(dryRun)
		it.Freed = !dryRun && err == nil
		if err != nil {
			it.Error = err.Error()
		}
		out = append(out, it)
	}
	for _, p := range loopdir.Orphans(loopdir.StateRoot(), dirs) {
		n, _ := p.FreeAgentTrees(true)
		out = append(out, GCItem{Folder: string(p), Bytes: n,
			Why: "no registered loop owns it: remove " + filepath.Join(string(p), "layers") + " by hand once no loop runs from it"})
	}
	return out, nil
}
