package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// writeSecrets notes, in the loop's private folder, what of it no other
// loop's agent may read (its records, its holdout files); a failure is a
// warning: the loop's own agents are confined as ever.
func (r *runner) writeSecrets() {
	if err := loopdir.Dir(r.dir).WriteSecrets(r.judge().Holdouts()); err != nil {
		r.emit(record.Event{Event: record.Warning, Kind: "secrets", Message: "cannot note the loop's records and holdout files for other loops' sandboxes to hide: " + err.Error()})
	}
}

// otherSecrets are what other loops keep from this loop's agent runs,
// masked there: in the loop folders inside this one, their records
// folders and what git ignores (judge.OtherLoopSecretsIn: found on disk,
// whether or not their engines ever ran here); and, as defence in depth,
// the records folders and holdout files every other engine that ran with
// this state folder listed. Other loops' folders outside the loop folder
// are not in the agent's view at all (its view is built from a manifest).
func (r *runner) otherSecrets() []string {
	return append(judge.OtherLoopSecretsIn(r.dir), loopdir.OtherSecrets(r.dir)...)
}

// secretsInReach are the paths of otherSecrets that exist inside the loop
// folder: what a run writing the folder in place (Landlock) would read.
func (r *runner) secretsInReach() []string {
	dirs := []string{r.dir}
	if c, err := filepath.EvalSymlinks(r.dir); err == nil && c != r.dir {
		dirs = append(dirs, c)
	}
	var in []string
	seen := map[string]bool{}
	for _, p := range r.otherSecrets() {
		for _, d := range dirs {
			rel, err := filepath.Rel(d, p)
			if err != nil || p == d || !sandbox.Within(p, d) {
				continue
			}
			if _, err := os.Lstat(p); err == nil && !seen[rel] {
				seen[rel] = true
				in = append(in, filepath.ToSlash(rel))
			}
			break
		}
	}
	sort.Strings(in)
	return in
}

// listSome is the first n of list, then how many more.
func listSome(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// putHoldoutsBack returns the holdout files the engine kept out of the
// loop folder while it ran.
func (e *Engine) putHoldoutsBack() {
	if err := judge.RestoreHoldouts(e.dir); err != nil {
		e.emit(record.Event{Event: record.Warning, Kind: "holdout", Message: fmt.Sprintf("cannot put the holdout files back in the loop folder: they stay in %s (the next run puts them back): %v", loopdir.PrivateOf(e.dir).HoldoutFiles(), err)})
	}
}
