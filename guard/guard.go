// Package guard is the protection of a loop's folder against the agent:
// which files are protected and why (the rules, protect_rules.go), the
// protected set kept up to date from an inotify watch of the folder
// (watch.go, changes.go), the on-disk snapshot of the protected files
// taken before each agent run and the restore after it (snapshot.go), and
// the list of what a run changed. It prints nothing and never imports the
// engine: what it needs of it comes in a Config.
package guard

import (
	"errors"
	"path/filepath"
	"sort"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/looprinter/looprinter/record"
)

// Config is what a Guard needs from the engine.
type Config struct {
	// Dir is the loop folder; Priv the engine's private folder, where the
	// snapshot and its copies of the files are kept, out of the agent's
	// reach.
	Dir, Priv string
	// Rules are the protection rules for the next run (NewProtectRules,
	// with the deliverables under review freed); made again at each walk.
	Rules func() (*ProtectRules, error)
	// Keep decides about an edited protected file that may keep a change
	// (the loop file judged field by field, KeepTestConfigEdit); nil keeps
	// none.
	Keep func(rel string, old, cur []byte) (bool, string)
	// Emit writes a record (a change_watch warning); nil writes none.
	Emit func(record.Event)
}

// Guard protects one loop folder across the engine's agent runs. A run
// goes: Files (the protected set), ReadOnly (for a sandbox without a
// layer), Begin, Snapshot, the run, End (what it changed), Check (compare
// and restore). Not safe for concurrent use.
type Guard struct {
	dir, priv string
	rules     func() (*ProtectRules, error)
	keep      func(rel string, old, cur []byte) (bool, string)
	emitFn    func(record.Event)

	watch      *treeWatch                      // the loop folder's changes; nil when walked instead
	noWatch    bool                            // the watch could not be set up: walk every run
	prot       *protCache                      // the protected set, kept up to date from watch
	snap       *snapshot                       // the protected files' snapshot as on disk
	snapFiles  *File                           // the protected list the snapshot was taken of
	snapSimple bool                            // every file of it watched, none with other links
	roFiles    []string                        // the protected files' paths for the sandbox
	roFor      *File                           // the protected list roFiles was made of
	marks      map[string]bool                 // paths the watch saw change since the last snapshot
	marksGone  []string                        // folders moved or removed since the last snapshot
	ignores    map[string]*gitignore.GitIgnore // .gitignore of each folder, for the list of changes
}

// New returns the guard of c.Dir. Nothing is read before the first call.
func New(c Config) *Guard {
	g := &Guard{dir: c.Dir, priv: c.Priv, rules: c.Rules, keep: c.Keep, emitFn: c.Emit}
	if g.rules == nil {
		g.rules = func() (*ProtectRules, error) { return nil, errors.New("no protection rules given to the guard") }
	}
	return g
}

func (g *Guard) emit(ev record.Event) {
	if g.emitFn != nil {
		g.emitFn(ev)
	}
}

// Close ends the watch and forgets the protected set. A nil Guard may be
// closed.
func (g *Guard) Close() {
	if g != nil {
		g.resetWatch()
	}
}

// ReadOnly are the absolute paths of files, for a sandbox that binds the
// protected files read-only one by one. The list is made again only when
// files is another list than the last call's.
func (g *Guard) ReadOnly(files []File) []string {
	var first *File
	if len(files) > 0 {
		first = &files[0]
	}
	if g.roFiles == nil || first == nil || first != g.roFor || len(files) != len(g.roFiles) {
		g.roFiles = make([]string, 0, len(files))
		for _, f := range files {
			g.roFiles = append(g.roFiles, filepath.Join(g.dir, filepath.FromSlash(f.Path)))
		}
		g.roFor = first
	}
	return g.roFiles
}

// Links are the absolute paths of the protected files (of files, the list
// Files returned) that are symbolic links. Landlock cannot keep a file
// inside the loop folder read-only (the check after the run restores it),
// but it keeps the place a protected link leads to out of the writable
// trees outside the folder: that is all it needs of the protected set (with
// the gate programs and the loop file, which may be reached through a
// linked folder). With
// the watch, the list is kept up to date from the changes (its cost does not
// grow with the number of protected files); without it, it is every
// protected file (ReadOnly).
func (g *Guard) Links(files []File) []string {
	if c := g.prot; c != nil && g.watch != nil && len(files) > 0 && len(c.sorted()) == len(files) && &files[0] == &c.sorted()[0] {
		if c.abs == nil {
			// And the gate programs and the loop file, which may sit in
			// a folder the walk did not enter (a link to a folder).
			add := map[string]bool{}
			for p := range c.links {
				add[p] = true
			}
			for p := range c.rules.programs {
				add[p] = c.files[p] != ""
			}
			if p := c.rules.loopFile; p != "" {
				add[p] = c.files[p] != ""
			}
			c.abs = make([]string, 0, len(add))
			for p, ok := range add {
				if ok {
					c.abs = append(c.abs, filepath.Join(g.dir, filepath.FromSlash(p)))
				}
			}
			sort.Strings(c.abs)
		}
		return c.abs
	}
	return g.ReadOnly(files) // without the watch: every one, as for a sandbox that binds them
}

// Begin is called just before an agent starts: what changed before (the
// engine's own writes, the gates) is not the run's.
func (g *Guard) Begin() (*RunChanges, error) { return g.beginChanges() }

// Snapshot writes the snapshot of files (the list Files returned) to the
// private folder before the run, unless the one on disk still holds for
// them; rc keeps it for Check. Files whose stat matches the previous
// snapshot, or that the watch saw unchanged, are not read again.
func (g *Guard) Snapshot(rc *RunChanges, files []File) error {
	s := g.snap
	if g.snapshotCurrent(files) {
		g.snapshotted()
	} else {
		var err error
		if s, err = takeSnapshot(g.dir, g.priv, files, g.snap, g.needsStat()); err != nil {
			return err
		}
		g.snapshotted()
		g.snapshotTaken(files, s)
	}
	rc.snap = s
	if g.watch != nil {
		g.watch.follow() // the run's events are read as they come: the kernel's queue never overflows
	}
	return nil
}

// End is called once every process of the run has ended. It returns the
// files the run changed (a folder moved away or removed as "folder/";
// paths .gitignore ignores left out) and the files it created (ignored or
// not: protection never looks at .gitignore).
func (g *Guard) End(rc *RunChanges) (changed, created []string, err error) {
	return g.endChanges(rc)
}

// Check compares the protected files with rc's snapshot and puts back
// every change: a modified, deleted, retyped or re-moded file is made
// again from the snapshot (an edit Keep accepts stays), and a file the run
// created (created, from End) that rules.ProtectNew covers is removed. It
// returns what was put back, sorted by file. Only the files the run's
// changes touch are looked at when the watch accounts for every one.
func (g *Guard) Check(rc *RunChanges, created []string, rules *ProtectRules) ([]Tamper, error) {
	protectNew := func(rel string) (string, bool) {
		p, ok := rules.ProtectNew(rel)
		return p.Rule, ok
	}
	cs := rc.snap
	if sub, ok := g.changedEntries(rc.snap); ok {
		cs = sub // only what the run's changes touch
	}
	tamper, err := cs.check(g.dir, g.priv, g.keep, created, protectNew, g.needsStat())
	if len(tamper) > 0 || err != nil {
		g.snap = nil // restored files are new files: the next snapshot looks at every one
	}
	g.judged(rc)
	return tamper, err
}

// RestoreSaved judges a run that was under way when the engine died: it
// compares the protected files with the snapshot on disk and puts back
// every change, as Check does. What the run created is not known (its
// engine died before it could compare): every protected file the snapshot
// lacks counts as created. Without a snapshot on disk it does nothing.
func (g *Guard) RestoreSaved() ([]Tamper, error) {
	s := loadSnapshot(g.priv)
	if s == nil {
		return nil, nil
	}
	rules, err := g.rules()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, en := range s.Entries {
		known[en.Path] = true
	}
	var created []string
	for _, p := range rules.Files() {
		if !known[p.Path] {
			created = append(created, p.Path)
		}
	}
	protectNew := func(rel string) (string, bool) {
		p, ok := rules.ProtectNew(rel)
		return p.Rule, ok
	}
	return s.check(g.dir, g.priv, g.keep, created, protectNew, nil)
}
