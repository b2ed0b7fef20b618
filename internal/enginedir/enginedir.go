// Package enginedir is the engine's private folder for each loop directory:
// outside the loop directory, 0700, and out of every agent run's reach (the
// sandbox makes it read-only). It holds what an agent must not be able to
// forge: the authoritative copy of the state, the snapshot of the protected
// files, and the index of the record files the engine itself wrote.
package enginedir

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Root is where looprinter keeps what is not in a loop's directory (the
// registry, logs of background runs, the engine folders):
// $LOOPRINTER_STATE_DIR, else $XDG_STATE_HOME/looprinter, else
// ~/.local/state/looprinter.
func Root() string {
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

// For is the engine folder of the loop directory dir.
func For(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := sha256.Sum256([]byte(filepath.Clean(dir)))
	return filepath.Join(Root(), "engine", hex.EncodeToString(h[:12]))
}

// Ensure creates the engine folder with mode 0700 (and tightens it if it
// exists) and returns its path.
func Ensure(dir string) (string, error) {
	p := For(dir)
	if err := os.MkdirAll(p, 0o700); err != nil {
		return "", err
	}
	os.Chmod(p, 0o700)
	return p, nil
}

const indexName = "records.index"

var indexMu sync.Mutex

// AddRecordFile appends a record file's name to the loop's index of files the
// engine wrote. The index is synced to disk before the function returns.
func AddRecordFile(loopDir, file string) error {
	indexMu.Lock()
	defer indexMu.Unlock()
	p, err := Ensure(loopDir)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(p, indexName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(filepath.Base(file) + "\n"); err != nil {
		return err
	}
	return f.Sync()
}

// ErrNoIndex says the loop has no index: it was never run by an engine that
// keeps one on this machine.
var ErrNoIndex = errors.New("no record index")

// RecordFiles lists the record files of recordsDir that the engine wrote,
// oldest first: only names in the index, only files that exist.
func RecordFiles(loopDir, recordsDir string) ([]string, error) {
	f, err := os.Open(filepath.Join(For(loopDir), indexName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoIndex
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" || seen[name] || strings.ContainsRune(name, '/') {
			continue
		}
		seen[name] = true
		p := filepath.Join(recordsDir, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, sc.Err()
}
