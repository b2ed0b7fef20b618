package loop

import (
	"path/filepath"

	"github.com/looprinter/looprinter/internal/enginedir"
)

// StateRoot is where looprinter keeps what is not in a loop's directory (the
// registry, logs of background runs, and each loop's private engine folder):
// $LOOPRINTER_STATE_DIR, else $XDG_STATE_HOME/looprinter, else
// ~/.local/state/looprinter. Agent runs never get write access to it.
func StateRoot() string { return enginedir.Root() }

// PrivateDir is the engine's own folder for one loop directory, outside the
// loop directory and out of every agent's reach: the authoritative state, the
// snapshot of protected files, and the list of record files the engine wrote.
func PrivateDir(dir string) string { return enginedir.For(dir) }

// LastCommitPath keeps the engine's last commit for the loop: before each
// commit the engine checks it is still an ancestor of HEAD (an agent has
// not rewritten the history). A fresh start forgets it.
func LastCommitPath(dir string) string {
	return filepath.Join(PrivateDir(dir), "last-commit")
}
