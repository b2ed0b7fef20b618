package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// Change detection and the protected set, kept up to date from the
// engine's treeWatch instead of walking the checkout around every agent
// run. docs/design.md ("Cost of an iteration") explains the choice.

// protCache is the protected set resolved once (one walk) and kept up to
// date from the changes the watch reports.
type protCache struct {
	spec  *spec.Loop
	rules *ProtectRules
	start map[string]bool
	files map[string]string // protected path → rule
	list  []File            // sorted; nil when files changed since
	links map[string]bool   // the protected paths that are symbolic links
	abs   []string          // links as absolute paths, sorted; nil when links changed since
}

// noteLink keeps links up to date for one protected path (fi nil: gone or
// no longer protected).
func (c *protCache) noteLink(rel string, fi os.FileInfo) {
	is := fi != nil && fi.Mode()&os.ModeSymlink != 0
	if is != c.links[rel] {
		if is {
			c.links[rel] = true
		} else {
			delete(c.links, rel)
		}
		c.abs = nil
	}
}

func (c *protCache) sorted() []File {
	if c.list == nil {
		c.list = make([]File, 0, len(c.files))
		for p, r := range c.files {
			c.list = append(c.list, File{Path: p, Rule: r})
		}
		sort.Slice(c.list, func(i, j int) bool { return c.list[i].Path < c.list[j].Path })
	}
	return c.list
}

// update decides again about one path that changed.
func (c *protCache) update(dir, rel string, created bool) {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	exists := err == nil && !fi.IsDir()
	if exists && created && !underDefaultSkipped(rel) {
		c.rules.note(rel)
	}
	rule := ""
	if exists {
		if p, ok := c.rules.rule(rel, true); ok && (!p.Default || c.start[rel]) {
			rule = p.Rule
		}
	}
	if rule != "" {
		c.noteLink(rel, fi)
	} else {
		c.noteLink(rel, nil)
	}
	if old, ok := c.files[rel]; ok && old == rule {
		return
	}
	if rule == "" {
		if _, ok := c.files[rel]; !ok {
			return
		}
		delete(c.files, rel)
	} else {
		c.files[rel] = rule
	}
	c.list = nil
}

// under lists the protected files under a folder.
func (c *protCache) under(folder string) []string {
	var out []string
	for p := range c.files {
		if strings.HasPrefix(p, folder+"/") {
			out = append(out, p)
		}
	}
	return out
}

// watchSkip says which folders the watch never looks into: git's and the
// records, and the dependency and build folders no user glob reaches (the
// folders the protection rules do not look into either; a Go module's
// vendor folder they protect whole, and the watch sees).
func watchSkip(dir string, l *spec.Loop) func(rel, name string) bool {
	r := &ProtectRules{l: l}
	return func(rel, name string) bool {
		return neverWalked[name] || defaultSkipped[name] && !r.userGlobCouldMatchUnder(rel) && !goVendorFolder(dir, rel, name)
	}
}

// takeChanges takes what the watch saw since the last take and remembers
// it for the protected files' comparison (see needsStat).
func (g *Guard) takeChanges() watchTake {
	t := g.watch.take()
	if t.Lost != "" {
		return t
	}
	if g.marks == nil {
		g.marks = map[string]bool{}
	}
	for _, p := range t.Changed {
		g.marks[p] = true
		if path.Base(p) == ".gitignore" {
			g.ignores = nil // read them again
		}
	}
	g.marksGone = append(g.marksGone, t.Gone...)
	return t
}

// needsStat says which protected files must be compared by stat: those the
// watch saw change, those under a folder moved or removed, and those
// without a watch of their own; nil (all of them) without a watch.
func (g *Guard) needsStat() func(rel string) bool {
	if g.watch == nil || g.prot == nil {
		return nil
	}
	w, marks, gone := g.watch, g.marks, g.marksGone
	return func(rel string) bool {
		if marks[rel] || !w.watchesFile(rel) {
			return true
		}
		for _, d := range gone {
			if strings.HasPrefix(rel, d+"/") {
				return true
			}
		}
		return false
	}
}

// changedEntries is the part of the snapshot g that the check after a run
// must look at, when the watch accounts for every protected file (each one
// watched, none with other links, as snapshotTaken found): the entries the
// watch saw change and those under a folder moved or removed. Its cost
// follows the changes, not the number of protected files. ok is false when
// every entry must be looked at.
func (g *Guard) changedEntries(s *snapshot) (sub *snapshot, ok bool) {
	if s == nil || s != g.snap || !g.snapSimple || g.watch == nil || g.prot == nil {
		return nil, false
	}
	if s.index == nil {
		s.index = make(map[string]int, len(s.Entries))
		for i, en := range s.Entries {
			s.index[en.Path] = i
		}
	}
	sub = &snapshot{}
	seen := map[int]bool{}
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			sub.Entries = append(sub.Entries, s.Entries[i])
		}
	}
	for p := range g.marks {
		if i, ok := s.index[p]; ok {
			add(i)
		}
	}
	for _, d := range g.marksGone {
		for i, en := range s.Entries {
			if strings.HasPrefix(en.Path, d+"/") {
				add(i)
			}
		}
	}
	return sub, true
}

// snapshotCurrent says whether the snapshot in memory (and on disk) still
// holds for files without looking at one of them: the same list as at the
// snapshot, every file watched, none with other links, and no change the
// watch saw since touches one. Its cost follows the changes.
func (g *Guard) snapshotCurrent(files []File) bool {
	s, c := g.snap, g.prot
	if s == nil || c == nil || g.watch == nil || len(files) == 0 || len(files) != len(s.Entries) ||
		&files[0] != g.snapFiles || !g.snapSimple {
		return false
	}
	for p := range g.marks {
		if _, ok := c.files[p]; ok {
			return false
		}
	}
	for _, d := range g.marksGone {
		if len(c.under(d)) > 0 {
			return false
		}
	}
	return true
}

// snapshotTaken notes what snapshotCurrent needs of a new snapshot.
func (g *Guard) snapshotTaken(files []File, s *snapshot) {
	g.snap, g.snapFiles, g.snapSimple = s, nil, false
	if len(files) == 0 || g.watch == nil {
		return
	}
	g.snapFiles, g.snapSimple = &files[0], len(files) == len(s.Entries)
	for _, en := range s.Entries {
		if en.Nlink > 1 || !g.watch.watchesFile(en.Path) {
			g.snapSimple = false
			break
		}
	}
}

// snapshotted is called once the snapshot holds every change marked so
// far: the marked protected files are watched again (a restored file is a
// new file) and the marks start afresh.
func (g *Guard) snapshotted() {
	if g.watch != nil && g.prot != nil {
		for p := range g.marks {
			if _, ok := g.prot.files[p]; ok {
				g.watch.watchFile(p)
			}
		}
		for _, d := range g.marksGone {
			for p := range g.prot.files {
				if strings.HasPrefix(p, d+"/") {
					g.watch.watchFile(p)
				}
			}
		}
	}
	clear(g.marks)
	g.marksGone = g.marksGone[:0]
}

// resetWatch drops the watch and the protected set: the next
// Files sets both up again with one walk.
func (g *Guard) resetWatch() {
	g.watch.close()
	g.watch, g.prot, g.snap = nil, nil, nil
	clear(g.marks)
	g.marksGone = nil
}

// Files lists the files protected for the next run of loop l, each with
// the rule that protects it: every file of the user's globs, gate programs
// and the loop file, and the files of the default rules that existed when
// the loop started. The set is resolved with one walk when the engine
// starts or the loop file changed (l is another *spec.Loop than the last
// call's), and then kept up to date from the watch. The rules are the
// Config's Rules, made at that walk.
func (g *Guard) Files(l *spec.Loop) ([]File, *ProtectRules, error) {
	if c := g.prot; c != nil && c.spec == l && g.watch != nil {
		t := g.takeChanges()
		if t.Lost == "" {
			g.applyChanges(t)
			return c.sorted(), c.rules, nil
		}
		g.emit(record.Event{Event: record.Warning, Kind: "change_watch", Message: "the protected files were listed again by a full walk: " + t.Lost})
	}
	// The watch first, so that nothing changes unseen between the walk and it.
	g.resetWatch()
	if !g.noWatch {
		w, err := newTreeWatch(g.dir, watchSkip(g.dir, l))
		if err != nil {
			g.noWatch = true
			g.emit(record.Event{Event: record.Warning, Kind: "change_watch", Message: "changes are found by walking the whole loop folder around every agent run (slower, as correct): " + err.Error()})
		} else {
			g.watch = w
		}
	}
	c, err := g.resolveProtected(l)
	if err != nil {
		g.resetWatch()
		return nil, nil, err
	}
	if g.watch != nil {
		g.prot = c
		for p := range c.files {
			g.watch.watchFile(p) // false (the watch limit): compared by stat
		}
	}
	return c.sorted(), c.rules, nil
}

// applyChanges brings the protected set up to date with a take.
func (g *Guard) applyChanges(t watchTake) {
	c := g.prot
	if c == nil {
		return
	}
	// Under a folder moved or removed, each protected file is decided
	// again like a changed one: gone, or (after a restore) there again.
	paths := t.Changed
	for _, d := range t.Gone {
		paths = append(paths[:len(paths):len(paths)], c.under(d)...)
	}
	created := map[string]bool{}
	for _, p := range t.Created {
		created[p] = true
	}
	for _, p := range paths {
		_, was := c.files[p]
		c.update(g.dir, p, created[p])
		if _, is := c.files[p]; is != was {
			if is {
				g.watch.watchFile(p)
			} else {
				g.watch.unwatchFile(p)
			}
		}
	}
}

// resolveProtected walks the loop folder for the protected set of loop l.
func (g *Guard) resolveProtected(l *spec.Loop) (*protCache, error) {
	rules, err := g.rules()
	if err != nil {
		return nil, err
	}
	all := rules.Files()
	var runners RunnerFiles
	if _, err := os.Lstat(loopdir.Private(g.priv).ProtectedAtStart()); err != nil {
		runners = rules.runnerFiles() // the first run: what the clean room will keep
	}
	rules.files, rules.skipped = nil, nil // rule() needs neither; a large checkout's list is not kept
	start := map[string]bool{}
	if data, err := os.ReadFile(loopdir.Private(g.priv).ProtectedAtStart()); err == nil {
		var list []string
		if json.Unmarshal(data, &list) != nil {
			return nil, fmt.Errorf("the engine's list of protected files is corrupt (%s)", loopdir.Private(g.priv).ProtectedAtStart())
		}
		for _, p := range list {
			start[p] = true
		}
	} else {
		// First run: the files the default rules protect now are the start set.
		var list []string
		for _, p := range all {
			if p.Default {
				list = append(list, p.Path)
				start[p.Path] = true
			}
		}
		// And the runner files of every ecosystem, for the clean room.
		rdata, _ := json.Marshal(runners)
		if err := WriteFileAtomic(loopdir.Private(g.priv).RunnerFilesAtStart(), rdata); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(list)
		if err := WriteFileAtomic(loopdir.Private(g.priv).ProtectedAtStart(), data); err != nil {
			return nil, err
		}
	}
	c := &protCache{spec: l, rules: rules, start: start, files: map[string]string{}, links: map[string]bool{}}
	for _, p := range all {
		if !p.Default || start[p.Path] {
			c.files[p.Path] = p.Rule
			if fi, err := os.Lstat(filepath.Join(g.dir, filepath.FromSlash(p.Path))); err == nil {
				c.noteLink(p.Path, fi)
			}
		}
	}
	return c, nil
}

// RunChanges follows one agent run's changes.
type RunChanges struct {
	before map[string]fileStamp // without a watch: every file's stamp before the run
	start  int64                // the file system's clock when the run started (ns)
	take   *watchTake           // the run's changes, as the watch saw them
	snap   *snapshot            // the snapshot taken for the run (Snapshot)
}

// judged is called once the protected files were compared and restored:
// the protected set learns what the run changed (a new ecosystem's marker
// file, a protected file the restore made again). Not before: a protected
// file the run deleted would leave the set before it was put back.
func (g *Guard) judged(rc *RunChanges) {
	if rc.take != nil && g.watch != nil {
		g.applyChanges(*rc.take)
	}
}

// beginChanges is called just before an agent starts: what changed before
// (the engine's own writes, the gates) is not the run's.
func (g *Guard) beginChanges() (*RunChanges, error) {
	rc := &RunChanges{start: FSClock()}
	if g.watch != nil {
		t := g.takeChanges()
		if t.Lost == "" {
			g.applyChanges(t)
			return rc, nil
		}
		// Incomplete since the list of protected files: the next listing
		// walks, and this run is judged by a walk.
		g.resetWatch()
	}
	before, err := treeStamps(g.dir)
	rc.before = before
	return rc, err
}

// endChanges is called once every process of the run has ended. It returns
// the files the run changed (a folder moved away or removed as "folder/";
// paths .gitignore ignores left out) and the files it created (ignored or
// not: protection never looks at .gitignore).
func (g *Guard) endChanges(rc *RunChanges) (changed, created []string, err error) {
	switch {
	case rc.before != nil:
		after, err := treeStamps(g.dir)
		if err != nil {
			return nil, nil, err
		}
		changed = changedFiles(rc.before, after)
		for _, f := range changed {
			if _, ok := rc.before[f]; !ok {
				if _, ok := after[f]; ok {
					created = append(created, f)
				}
			}
		}
	case g.watch != nil:
		t := g.takeChanges()
		if t.Lost == "" {
			rc.take = &t
			changed, created = t.Changed, t.Created
			for _, d := range t.Gone {
				changed = append(changed, d+"/")
			}
			sort.Strings(changed)
			break
		}
		// Incomplete: every file whose ctime is past the run's start is
		// the run's (ctime cannot be set back); any file a protection rule
		// covers for new files and the snapshot lacks is judged as created.
		g.emit(record.Event{Event: record.Warning, Kind: "change_watch", Message: "this run's changes were found by a full walk of the loop folder: " + t.Lost})
		g.resetWatch()
		if changed, err = changedSince(g.dir, rc.start); err != nil {
			return nil, nil, err
		}
		created = changed
	default:
		return nil, nil, errors.New("no change detection: neither a watch nor a walk before the run")
	}
	return g.notIgnored(changed), created, nil
}

// notIgnored leaves out the paths .gitignore files ignore (the top one and
// those of the folders on each path's way). Only for the list of changes:
// protection never consults .gitignore.
func (g *Guard) notIgnored(paths []string) []string {
	if len(paths) == 0 {
		return paths
	}
	for _, p := range paths {
		if path.Base(strings.TrimSuffix(p, "/")) == ".gitignore" {
			g.ignores = nil // read them again
			break
		}
	}
	if g.ignores == nil {
		g.ignores = map[string]*gitignore.GitIgnore{}
	}
	out := paths[:0:0]
	for _, p := range paths {
		if !g.ignored(p) {
			out = append(out, p)
		}
	}
	return out
}

func (g *Guard) ignored(p string) bool {
	trimmed := strings.TrimSuffix(p, "/")
	for folder := path.Dir(trimmed); ; folder = path.Dir(folder) {
		gi, ok := g.ignores[folder]
		if !ok {
			gi = nil
			if data, err := ReadBounded(filepath.Join(g.dir, filepath.FromSlash(folder), ".gitignore"), 1<<20); err == nil {
				gi = gitignore.CompileIgnoreLines(strings.Split(string(data), "\n")...)
			}
			if len(g.ignores) < 10000 {
				g.ignores[folder] = gi
			}
		}
		if gi != nil {
			sub := trimmed
			if folder != "." {
				sub = strings.TrimPrefix(trimmed, folder+"/")
			}
			if gi.MatchesPath(sub) {
				return true
			}
		}
		if folder == "." {
			return false
		}
	}
}
