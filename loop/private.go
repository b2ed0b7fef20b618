package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// StateRoot is where looprinter keeps what is not in a loop's directory (the
// registry, logs of background runs, and each loop's private engine folder):
// $LOOPRINTER_STATE_DIR, else $XDG_STATE_HOME/looprinter, else
// ~/.local/state/looprinter. Agent runs never get write access to it.
func StateRoot() string {
	if d := os.Getenv("LOOPRINTER_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "looprinter")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "looprinter-state")
	}
	return filepath.Join(home, ".local", "state", "looprinter")
}

// PrivateDir is the engine's own folder for one loop directory, outside the
// loop directory and out of every agent's reach: the authoritative state, the
// snapshot of protected files, and the list of record files the engine wrote.
func PrivateDir(dir string) string {
	h := sha256.Sum256([]byte(filepath.Clean(dir)))
	return filepath.Join(StateRoot(), "engine", hex.EncodeToString(h[:12]))
}
