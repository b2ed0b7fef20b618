package loopdir

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// StateRoot is where looprinter keeps what is not in a loop's folder (the
// registry of loops, the logs of background runs, the engines' private
// folders, the fleet's work): $LOOPRINTER_STATE_DIR, else
// $XDG_STATE_HOME/looprinter, else ~/.local/state/looprinter. Agent runs
// never get write access to it.
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

// Private is the engine's private folder of one loop: outside the loop's
// folder, 0700, and out of every agent run's reach (the sandbox makes it
// read-only). It holds what an agent must not be able to forge: the
// authoritative state and its journal, the snapshot of the protected files,
// the index of the record files the engine wrote, the operator channel.
type Private string

// PrivateOf is the private folder of the loop folder dir; it is named by
// the folder's absolute path.
func PrivateOf(dir string) Private { return PrivateUnder(StateRoot(), dir) }

// PrivateUnder is PrivateOf for the state root root.
func PrivateUnder(root, dir string) Private {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := sha256.Sum256([]byte(filepath.Clean(dir)))
	return Private(filepath.Join(root, "engine", hex.EncodeToString(h[:12])))
}

// Ensure creates the private folder with mode 0700 (and tightens it if it
// exists) and returns its path.
func (p Private) Ensure() (string, error) {
	if err := os.MkdirAll(string(p), 0o700); err != nil {
		return "", err
	}
	os.Chmod(string(p), 0o700)
	return string(p), nil
}

func (p Private) join(name string) string { return filepath.Join(string(p), name) }

// State is the engine's authoritative copy of the state, as last written
// whole (the journal's slots are newer when they exist).
func (p Private) State() string { return p.join("state.json") }

// Journal is slot i (0 or 1) of the state journal.
func (p Private) Journal(i int) string { return p.join(".state." + strconv.Itoa(i)) }

// LastCommit keeps the engine's last commit: before each commit the engine
// checks it is still an ancestor of HEAD (an agent has not rewritten the
// history). A fresh start forgets it.
func (p Private) LastCommit() string { return p.join("last-commit") }

// Tally is the spend tally, kept up to date from the records as they grow.
func (p Private) Tally() string { return p.join("spend.json") }

// Checkpoints is the ledger of the commits a rollback may return to.
func (p Private) Checkpoints() string { return p.join("checkpoints.json") }

// Protected is the snapshot of the protected files: their list and digests.
func (p Private) Protected() string { return p.join("protected.json") }

// Blobs holds the protected files' contents, by digest.
func (p Private) Blobs() string { return p.join("blobs") }

// Blob is where the protected content with digest sum is kept.
func (p Private) Blob(sum string) string { return filepath.Join(p.Blobs(), sum[:2], sum) }

// ProtectedAtStart lists the files the default rules protected when the
// loop started: those may not be edited; test files added since may.
func (p Private) ProtectedAtStart() string { return p.join("protected-at-start.json") }

// RunnerFilesAtStart lists the files a test runner loads (tests, test
// data and support, runner configuration, of any ecosystem) that the loop
// folder held when the loop started: the clean room sets aside the others.
func (p Private) RunnerFilesAtStart() string { return p.join("runner-files-at-start.json") }

// HoldoutChecks holds the holdout checks' output: never in the records,
// which the agent can read.
func (p Private) HoldoutChecks() string { return p.join("holdout-checks") }

// StrengthScratch holds the trees and mutated files of a verify_strength
// pass while it runs (the mutants' checks never see it).
func (p Private) StrengthScratch() string { return p.join("strength") }

// TestsBaseline holds, per check command, the test results at the
// baseline (raised when a gate passes with more): the passing-count ratchet.
func (p Private) TestsBaseline() string { return p.join("tests-baseline.json") }

// Operator is the operator channel's folder: questions, answers, guidance.
func (p Private) Operator() string { return p.join("operator") }

// FleetStart names the commit a fleet loop started from (carried with the
// private files from worker to worker).
func (p Private) FleetStart() string { return p.join("fleet-start") }

// GitGuard is the snapshot of the repository's control files taken
// before a Landlock run, kept until the run's end puts them back: a crash
// between the two leaves it for the restart to put them back.
func (p Private) GitGuard() string { return p.join("git-guard.json") }

// LayerUpper and LayerWork are the upper and work folders of one
// copy-on-write layer of the loop's agent runs: "loop" for the loop
// folder's, one per tree for the agent's HOME and caches, which persist
// from run to run.
func (p Private) LayerUpper(name string) string {
	return filepath.Join(string(p), "layers", name, "upper")
}

// LayerWork: see LayerUpper.
func (p Private) LayerWork(name string) string {
	return filepath.Join(string(p), "layers", name, "work")
}

// Pristine keeps the originals of the files under dependency folders that
// agent runs changed (pristine/files/REL) and the list of those paths
// (pristine/manifest.json): the clean room sees those folders as they were
// when the loop started.
func (p Private) Pristine() string { return p.join("pristine") }

// CheckScratch is where the judge's check sandboxes keep their throw-away
// layers while checks run (no agent's sandbox shows the state folder).
func (p Private) CheckScratch() string { return p.join("check-scratch") }

// CheckCache is the loop's trusted cache layer for its checks: the build
// caches and outputs the checks' warm-up wrote on the tree the loop started
// with (check-cache/layer), the key that says when it is refreshed
// (check-cache/key), and the warm-up's folder while it runs
// (check-cache/warming). No check and no agent ever writes it.
func (p Private) CheckCache() string { return p.join("check-cache") }

// LiveTranscripts is where the runs of a wave (and the attempts of a
// best-of) write their transcripts while any of them runs: no agent's
// sandbox shows the state folder, so no run reads another's live output.
// Once every run of the wave ended they move to the loop's transcripts.
func (p Private) LiveTranscripts() string { return p.join("live-transcripts") }

// Alive is an empty file the engine touches every second while an agent
// runs: after the engine died, its time is when the engine was last alive
// (the end of the runs killed with it).
func (p Private) Alive() string { return p.join("alive") }

// LayerJournal is where the apply of layer name keeps its plan and
// progress until the layer is wholly applied.
func (p Private) LayerJournal(name string) string {
	return filepath.Join(string(p), "layers", name, "apply.journal")
}

// AppliedTask is where the engine notes, before the apply of layer name
// starts, which run and task it applies, until that task's verdict is
// saved: a restart after a kill in between knows the task's work landed.
func (p Private) AppliedTask(name string) string {
	return filepath.Join(string(p), "layers", name, "applied-task.json")
}

// AgentHome is the loop's private HOME for its agents where no layer can
// be made (Landlock; bubblewrap without overlayfs): seeded with the agent
// CLIs' folders, written by the agents from run to run, never read by a
// check or by the engine's git.
func (p Private) AgentHome() string { return p.join("home") }

// AgentCache holds the agents' private build and package caches beside
// AgentHome.
func (p Private) AgentCache() string { return p.join("cache") }

// Pause, while it exists, holds the loop between agent runs. No agent run
// can write it, so an agent cannot pause its own loop (or another) and
// leave it waiting forever.
func (p Private) Pause() string { return p.join("pause") }

// recordIndex lists the record files the engine itself wrote.
func (p Private) recordIndex() string { return p.join("records.index") }

var indexMu sync.Mutex

// addRecordFile appends a record file's name to the loop's index of files
// the engine wrote. The index is synced to disk before it returns.
func (p Private) addRecordFile(file string) error {
	indexMu.Lock()
	defer indexMu.Unlock()
	if _, err := p.Ensure(); err != nil {
		return err
	}
	f, err := os.OpenFile(p.recordIndex(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(filepath.Base(file) + "\n"); err != nil {
		return err
	}
	return f.Sync()
}

// errNoIndex says the loop has no index: it was never run by an engine that
// keeps one on this machine.
var errNoIndex = errors.New("no record index")

// indexedFiles lists the record files of recordsDir that the engine wrote,
// oldest first: only names in the index, only files that exist.
func (p Private) indexedFiles(recordsDir string) ([]string, error) {
	f, err := os.Open(p.recordIndex())
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoIndex
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
		path := filepath.Join(recordsDir, name)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out, sc.Err()
}

// StateInside says why the state root cannot serve the loop folder dir
// (nil when it can): it lies inside dir (HOME inside the project, or a
// loop folder that is HOME). Agents write the loop folder, so what the
// engine keeps from them would be theirs to change, and a copy-on-write
// layer over dir cannot keep its changes inside dir (the kernel refuses
// the mount); every run and every check would fail.
func StateInside(dir string) error {
	root := realPath(StateRoot())
	d := realPath(dir)
	if root == "" || d == "" || !(root == d || strings.HasPrefix(root, d+string(filepath.Separator)) || d == string(filepath.Separator)) {
		return nil
	}
	return fmt.Errorf("the engine's state folder %s is inside the loop folder %s: agents write the loop folder, "+
		"and a copy-on-write layer over it cannot keep its changes inside it (every check and run would fail); "+
		"set LOOPRINTER_STATE_DIR (or XDG_STATE_HOME) to a folder of yours outside %s, "+
		"or run the loop in a folder that does not hold %s", StateRoot(), dir, dir, StateRoot())
}

// realPath is p absolute with its symbolic links resolved, as far as it
// exists ("" when it cannot be made absolute).
func realPath(p string) string {
	p, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}

// HoldoutFiles keeps the loop's holdout files (HoldoutFiles/REL) while its
// engine runs: out of the loop folder, where another loop's agent could
// read them by path; the holdout checks' view alone shows them.
func (p Private) HoldoutFiles() string { return p.join("holdout-files") }

// Secrets lists what of the loop no other loop's agent may see: its
// records folder and its holdout files (absolute paths), written by its
// engine (see OtherSecrets).
func (p Private) Secrets() string { return p.join("secrets.json") }
