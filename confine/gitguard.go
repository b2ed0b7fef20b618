package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// The repository's control files under Landlock. Landlock only grants:
// .git's control files (config, hooks, info) cannot be kept read-only
// inside a writable folder, so they are snapshot before a run and put back
// after it (a hook or a core.hooksPath would run unconfined at the user's
// next commit).

// GuardGit snapshots the control files of the repository the loop folder
// dir is in (nil when it is in none), in memory and in priv, the engine's
// private folder for the loop: a crash before the run's end leaves the
// snapshot for the restart to put back (RecoverGit).
func GuardGit(priv, dir string) (*sandbox.GitGuard, error) {
	g := RepoGitDir(dir)
	if g == "" {
		return nil, nil
	}
	gg, err := sandbox.GuardGit(g)
	if err == nil {
		err = gg.Save(loopdir.Private(priv).GitGuard())
	}
	if err != nil {
		return nil, fmt.Errorf("cannot keep the repository's control files from the agent: %w", err)
	}
	return gg, nil
}

// RecoverGit puts .git's control files back after a crash in the middle
// of a Landlock run, from the snapshot saved in priv before it: the
// restart's first act on the repository.
func RecoverGit(priv string, emit func(record.Event)) []guard.Tamper {
	g, err := sandbox.LoadGitGuard(loopdir.Private(priv).GitGuard())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			emit(record.Event{Event: record.Warning, Kind: "git_guard", Message: "cannot read the snapshot of the repository's control files left by a run that crashed: " + err.Error()})
		}
		return nil
	}
	return PutGitBack(priv, g, "after a run that crashed", emit)
}

// PutGitBack restores a snapshot of .git's control files and drops its
// copy in priv; each path it put back is a refused change.
func PutGitBack(priv string, g *sandbox.GitGuard, when string, emit func(record.Event)) []guard.Tamper {
	undone, err := g.Restore()
	if err != nil {
		emit(record.Event{Event: record.Warning, Kind: "git_guard", Message: "cannot put the repository's control files back " + when + ": " + err.Error()})
	} else {
		os.Remove(loopdir.Private(priv).GitGuard())
	}
	var out []guard.Tamper
	for _, p := range undone {
		out = append(out, guard.Tamper{File: ".git/" + p, What: "changed", Rule: "the repository's control files (config, hooks, info) are the user's"})
	}
	return out
}
