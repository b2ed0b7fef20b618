// Package rollback keeps a loop's checkpoints and takes its branch back.
//
// The engine keeps, in its private folder, which of its own commits passed
// which checks: a checkpoint is only ever a commit the engine made itself
// (its last-commit file, never HEAD or a ref an agent could move) whose
// tree is the tree the checks ran on. From that ledger a Keeper takes the
// loop's branch back to the best state when the loop stops without DONE,
// and, with git.rollback: task, undoes a build run that broke a check that
// passed before. What it undoes is never lost: it is committed (the work
// tree included) to refs/looprinter/<loop>/…, and the ledger keeps the
// commit each such ref must name, so a moved ref is put back.
//
// What counts as the best state is read here alone (Ledger.Best,
// Checkpoint.Worse): passing tests first, then checks passed, the latest
// of equals, never a gamed one.
package rollback

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
)

// Checkpoint is a commit of the engine's and the checks seen on its tree.
type Checkpoint struct {
	Commit string          `json:"commit"`
	Tree   string          `json:"tree"`
	Checks map[string]bool `json:"checks"` // command → passed
	// Tests are the passing tests each check's runner counted on the
	// tree (command → passed; a check whose output shows no count is not
	// in it): the ratchet's counts, which rank states before Checks.
	Tests     map[string]int `json:"tests,omitempty"`
	Tasks     []string       `json:"tasks,omitempty"` // tasks the engine judged passed at this commit
	Cycle     int            `json:"cycle"`
	Iteration int            `json:"iteration"`
	At        time.Time      `json:"at"`
	// Gamed: the checks passed on a tree that holds runner files the
	// agent added (tests, their support, runner configuration: what the
	// clean room sets aside), and no clean room passed on it: its passes
	// may be the agent's forgery, so it is never a state to go back to.
	Gamed bool `json:"gamed,omitempty"`
}

// Score is the number of checks that passed on the checkpoint's tree.
func (c Checkpoint) Score() int {
	n := 0
	for _, ok := range c.Checks {
		if ok {
			n++
		}
	}
	return n
}

// PassingTests is the number of tests the checks' runners counted passing
// on the checkpoint's tree.
func (c Checkpoint) PassingTests() int {
	n := 0
	for _, p := range c.Tests {
		n += p
	}
	return n
}

// Worse says whether c ranks below o: fewer passing tests (a commit that
// made more checks pass by dropping tests is not better), or as many and
// fewer checks passed.
func (c Checkpoint) Worse(o Checkpoint) bool {
	if a, b := c.PassingTests(), o.PassingTests(); a != b {
		return a < b
	}
	return c.Score() < o.Score()
}

// KeptRef is work the engine took off the branch, kept on a ref.
type KeptRef struct {
	Ref     string    `json:"ref"`
	Commit  string    `json:"commit"`
	Kind    string    `json:"kind"` // task or stop
	Why     string    `json:"why"`
	Commits []string  `json:"commits,omitempty"` // "abc1234 subject", newest first
	At      time.Time `json:"at"`
}

// Ledger is the engine's record of checkpoints and kept refs for one loop.
type Ledger struct {
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	Kept        []KeptRef    `json:"kept,omitempty"`
}

// Best is the checkpoint where the most tests passed (the ratchet's
// counts), then the most checks, the latest of equals; a gamed one (see
// Checkpoint.Gamed) is never chosen.
func (l *Ledger) Best() (Checkpoint, bool) {
	best, ok := Checkpoint{}, false
	for _, c := range l.Checkpoints {
		if c.Gamed {
			continue
		}
		if !ok || !c.Worse(best) {
			best, ok = c, true
		}
	}
	return best, ok
}

// LoadLedger reads the engine's ledger of a loop directory (empty when the
// loop never reached a checkpoint).
func LoadLedger(dir string) *Ledger {
	return Load(string(loopdir.PrivateOf(dir)))
}

// Load reads the ledger kept in an engine's private folder.
func Load(priv string) *Ledger {
	l := &Ledger{}
	if data, err := os.ReadFile(loopdir.Private(priv).Checkpoints()); err == nil {
		json.Unmarshal(data, l)
	}
	return l
}

// Save writes the ledger into an engine's private folder, whole or not at
// all.
func (l *Ledger) Save(priv string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return guard.WriteFileAtomic(loopdir.Private(priv).Checkpoints(), data)
}

// CopyTests is a copy of a checkpoint's counts, to add a gate's to.
func CopyTests(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// NoteTests keeps a check's passing count when its output showed one (a
// check without a count leaves what an earlier gate on the tree counted).
func NoteTests(tests map[string]int, r judge.CheckResult) {
	if r.Tests.Known {
		tests[r.Command] = r.Tests.Passed
	}
}

// RefPrefix is where a loop's undone work is kept.
func RefPrefix(name string) string { return "refs/looprinter/" + name + "/" }

// KeptLines lists the kept refs for the final report, newest last.
func KeptLines(kept []KeptRef) []string {
	var out []string
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].At.Before(kept[j].At) })
	for _, k := range kept {
		line := fmt.Sprintf("%s (%.12s): %s", k.Ref, k.Commit, k.Why)
		if len(k.Commits) > 0 {
			line += "; commits: " + strings.Join(k.Commits, "; ")
		}
		out = append(out, line)
	}
	return out
}
