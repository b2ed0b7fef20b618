// Package ops operates loops from outside: the registry of the user's loops
// (so `list` and `status` know them), their live state read from the files
// a run writes, background runs, and stopping them.
//
// Nothing here talks to a running engine: every answer comes from the files
// under the loop's directory (state.json, plan.json, the records, the lock)
// and from the process table, so any command can attach to and detach from
// a loop at any time.
package ops

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/spec"
)

// Entry is one loop the user has run or started.
type Entry struct {
	Key      string `json:"key"`
	Name     string `json:"name"`
	LoopFile string `json:"loop_file"` // the loop file as the user named it (absolute)
	Dir      string `json:"dir"`       // its directory
	// RunDir is where the loop runs and keeps its state: Dir, or the loop's
	// directory inside its git worktree, or the archive of a finished
	// worktree run.
	RunDir   string `json:"run_dir"`
	RunFile  string `json:"run_file"`
	Worktree string `json:"worktree,omitempty"` // the worktree's root while it exists
	Branch   string `json:"branch,omitempty"`
	// Base is the branch that was checked out when the loop first switched
	// to its own (git.branch): where it lands unless git.base says.
	Base     string `json:"base,omitempty"`
	Archived bool   `json:"archived,omitempty"` // the worktree was cleaned up; RunDir is the archive
	// Issue and Pull are the links of the forge's issue a run works on and
	// of its pull request (run --issue), for the dashboard.
	Issue string `json:"issue,omitempty"`
	Pull  string `json:"pull,omitempty"`

	Log          string    `json:"log,omitempty"`          // output of background runs
	LauncherPID  int       `json:"launcher_pid,omitempty"` // the process `start` spawned
	Schedule     string    `json:"schedule,omitempty"`     // "every 10m" or a cron expression, when a scheduler runs it
	SchedulerPID int       `json:"scheduler_pid,omitempty"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

// StateDir is where looprinter keeps what is not in a loop's directory
// (loop.StateRoot).
func StateDir() string { return loopdir.StateRoot() }

func loopsDir() string { return filepath.Join(StateDir(), "loops") }

// LogDir holds the output of background runs.
func LogDir() string { return filepath.Join(StateDir(), "logs") }

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// KeyFor names a loop in the registry: its name and a short hash of its loop
// file, so two loops of the same name in different places do not collide.
func KeyFor(name, loopFile string) string {
	h := sha1.Sum([]byte(loopFile))
	n := unsafeChars.ReplaceAllString(name, "-")
	if n == "" {
		n = "loop"
	}
	return n + "-" + hex.EncodeToString(h[:4])
}

func entryPath(key string) string { return filepath.Join(loopsDir(), key+".json") }

// Load reads one entry by key.
func Load(key string) (Entry, error) {
	var e Entry
	data, err := os.ReadFile(entryPath(key))
	if err != nil {
		return e, err
	}
	err = json.Unmarshal(data, &e)
	return e, err
}

// Save writes an entry atomically.
func Save(e Entry) error {
	if e.Key == "" {
		e.Key = KeyFor(e.Name, e.LoopFile)
	}
	if e.Created.IsZero() {
		e.Created = time.Now().UTC()
	}
	e.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return loop.WriteFileAtomic(entryPath(e.Key), append(data, '\n'))
}

// Update loads the entry for key (or starts from def), applies fn and saves.
func Update(def Entry, fn func(*Entry)) (Entry, error) {
	if def.Key == "" {
		def.Key = KeyFor(def.Name, def.LoopFile)
	}
	e, err := Load(def.Key)
	if err != nil {
		e = def
	}
	fn(&e)
	return e, Save(e)
}

// Forget removes an entry; the loop's own files are left alone.
func Forget(key string) error { return os.Remove(entryPath(key)) }

// Entries lists every registered loop, by name.
func Entries() ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(loopsDir(), "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var e Entry
		if json.Unmarshal(data, &e) == nil && e.Key != "" {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].LoopFile < out[j].LoopFile
	})
	return out, nil
}

// ErrNotFound says no registered loop matches.
var ErrNotFound = errors.New("no such loop")

// Find resolves what the user typed: a loop's name, its registry key, its
// directory or its loop file (registered or not).
func Find(arg string) (Entry, error) {
	entries, _ := Entries()
	var hits []Entry
	for _, e := range entries {
		if e.Name == arg || e.Key == arg {
			hits = append(hits, e)
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	if len(hits) > 1 {
		var where []string
		for _, h := range hits {
			where = append(where, fmt.Sprintf("%s (%s)", h.Key, h.LoopFile))
		}
		return Entry{}, fmt.Errorf("%d loops are named %q; name one by its key or its loop file: %s", len(hits), arg, strings.Join(where, ", "))
	}
	if abs, err := filepath.Abs(arg); err == nil {
		if fi, err := os.Stat(abs); err == nil {
			file := abs
			if fi.IsDir() {
				file = filepath.Join(abs, "loop.yaml")
			}
			for _, e := range entries {
				if e.LoopFile == file || e.RunFile == file || (fi.IsDir() && (e.Dir == abs || e.RunDir == abs)) {
					return e, nil
				}
			}
			return Unregistered(file)
		}
	}
	return Entry{}, fmt.Errorf("%w %q: `looprinter list` shows the loops looprinter knows", ErrNotFound, arg)
}

// Unregistered describes a loop file looprinter has not run yet (or whose
// registry entry is gone) as an entry, without saving it.
func Unregistered(loopFile string) (Entry, error) {
	if _, err := os.Stat(loopFile); err != nil {
		return Entry{}, fmt.Errorf("%w: no loop file at %s", ErrNotFound, loopFile)
	}
	dir := filepath.Dir(loopFile)
	name := NameOf(loopFile)
	return Entry{Key: KeyFor(name, loopFile), Name: name, LoopFile: loopFile, Dir: dir, RunDir: dir, RunFile: loopFile}, nil
}

var nameLine = regexp.MustCompile(`(?m)^name:\s*["']?([^"'#\n]+?)["']?\s*(#.*)?$`)

// NameOf reads a loop's name from its file cheaply (the name: line, else
// the directory's name, as spec does).
func NameOf(loopFile string) string {
	if data, err := spec.ReadFile(loopFile); err == nil {
		if m := nameLine.FindSubmatch(data); m != nil {
			return strings.TrimSpace(string(m[1]))
		}
	}
	n := unsafeChars.ReplaceAllString(filepath.Base(filepath.Dir(loopFile)), "-")
	if n == "" {
		return "loop"
	}
	return n
}
