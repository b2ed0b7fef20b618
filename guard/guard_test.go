//go:build linux

package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// guardLoop is a Go loop folder whose test says FAIL, with new_test.go
// files protected by a user glob, and a Guard over it built without an
// engine; the records it writes go to evs.
func guardLoop(t *testing.T) (dir, priv string, l *spec.Loop, g *Guard, evs *[]record.Event) {
	t.Helper()
	dir, l = protectFixture(t, goLoop+"protect: [\"**/new_test.go\"]\n", map[string]string{
		"go.mod": "module example.com/x\n", "add.go": "package x\n", "add_test.go": "package x // FAIL\n",
	})
	priv = t.TempDir()
	evs = &[]record.Event{}
	g = New(Config{Dir: dir, Priv: priv,
		Rules: func() (*ProtectRules, error) { return NewProtectRules(dir, l) },
		Emit:  func(ev record.Event) { *evs = append(*evs, ev) }})
	t.Cleanup(g.Close)
	return dir, priv, l, g, evs
}

// snapshotForRun lists the protected files and snapshots them, as the
// engine does before an agent starts.
func snapshotForRun(t *testing.T, g *Guard, l *spec.Loop) (*RunChanges, *ProtectRules) {
	t.Helper()
	files, rules, err := g.Files(l)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(files, func(f File) bool { return f.Path == "add_test.go" }) {
		t.Fatalf("protected %v, want add_test.go", files)
	}
	rc, err := g.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Snapshot(rc, files); err != nil {
		t.Fatal(err)
	}
	return rc, rules
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustPutBack says the edited test is as it was and the created protected
// file is gone, each reported once.
func mustPutBack(t *testing.T, dir string, ts []Tamper, created string) {
	t.Helper()
	var got []string
	for _, x := range ts {
		got = append(got, x.File+" "+x.What)
	}
	want := []string{created + " created", "add_test.go modified"}
	slices.Sort(want) // reported sorted by file
	if !slices.Equal(got, want) {
		t.Fatalf("tamper %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "add_test.go")); string(b) != "package x // FAIL\n" {
		t.Fatalf("add_test.go after the check: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(created))); err == nil {
		t.Fatalf("the created protected file %s was left", created)
	}
}

// One run, as the engine drives it: an agent weakens the protected test,
// adds a file a user glob protects and edits the deliverable. The list of
// changes has all three; the check puts the test back and removes the new
// file; the deliverable's edit stays.
func TestGuardRunPutsBackWhatTheAgentChanged(t *testing.T) {
	dir, _, l, g, evs := guardLoop(t)
	rc, rules := snapshotForRun(t, g, l)
	write(t, dir, "add_test.go", "package x // PASS\n")
	write(t, dir, "a/b/new_test.go", "package b\n")
	write(t, dir, "add.go", "package x\n\nfunc Add() {}\n")
	changed, created, err := g.End(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/b/new_test.go", "add.go", "add_test.go"}; !slices.Equal(changed, want) || !slices.Contains(created, "a/b/new_test.go") {
		t.Fatalf("changed %v, created %v; want changed %v and a/b/new_test.go created", changed, created, want)
	}
	ts, err := g.Check(rc, created, rules)
	if err != nil {
		t.Fatal(err)
	}
	mustPutBack(t, dir, ts, "a/b/new_test.go")
	if b, _ := os.ReadFile(filepath.Join(dir, "add.go")); string(b) != "package x\n\nfunc Add() {}\n" {
		t.Fatalf("the deliverable's edit was undone: %q", b)
	}
	if len(*evs) != 0 {
		t.Errorf("records %+v, want none: the watch saw every change", *evs)
	}
	// The next run starts from the restored files: the same edit is
	// caught again.
	rc, rules = snapshotForRun(t, g, l)
	write(t, dir, "add_test.go", "package x // PASS\n")
	_, created, err = g.End(rc)
	if err != nil {
		t.Fatal(err)
	}
	if ts, err = g.Check(rc, created, rules); err != nil || len(ts) != 1 || ts[0].File != "add_test.go" {
		t.Fatalf("second run: tamper %+v (%v), want add_test.go put back again", ts, err)
	}
}

// A run that changes more paths than the watch remembers is judged by a
// walk, and a protected file it created is still removed.
func TestWatchTooManyChangesWalks(t *testing.T) {
	old := maxDirty
	maxDirty = 50
	defer func() { maxDirty = old }()
	dir, _, l, g, evs := guardLoop(t)
	rc, rules := snapshotForRun(t, g, l)
	for i := 0; i < 100; i++ {
		write(t, dir, fmt.Sprintf("f%d.txt", i), "x\n")
	}
	write(t, dir, "a/b/new_test.go", "y\n")
	write(t, dir, "keep.txt", "z\n")
	write(t, dir, "add_test.go", "package x // PASS\n")
	changed, created, err := g.End(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(*evs, func(ev record.Event) bool { return ev.Event == record.Warning && ev.Kind == "change_watch" }) {
		t.Fatal("no warning of the walk")
	}
	if !slices.Contains(changed, "keep.txt") || !slices.Contains(changed, "f99.txt") {
		t.Fatalf("changed %v, want the walk's list", changed)
	}
	ts, err := g.Check(rc, created, rules)
	if err != nil {
		t.Fatal(err)
	}
	mustPutBack(t, dir, ts, "a/b/new_test.go")
}

// A run under way when the engine died is judged by the next engine from
// the snapshot on disk alone: a new Guard over the same folders puts back
// the edited test and removes the protected file the run added.
func TestGuardRestoreSavedAfterADeadEngine(t *testing.T) {
	dir, priv, l, g, _ := guardLoop(t)
	snapshotForRun(t, g, l)
	g.Close() // the engine died during the run
	write(t, dir, "add_test.go", "package x // PASS\n")
	write(t, dir, "new_test.go", "package x\n")
	next := New(Config{Dir: dir, Priv: priv, Rules: func() (*ProtectRules, error) { return NewProtectRules(dir, l) }})
	defer next.Close()
	ts, err := next.RestoreSaved()
	if err != nil {
		t.Fatal(err)
	}
	mustPutBack(t, dir, ts, "new_test.go")
	// Without a snapshot on disk there is nothing to judge.
	empty := New(Config{Dir: dir, Priv: t.TempDir()})
	if ts, err := empty.RestoreSaved(); err != nil || len(ts) != 0 {
		t.Fatalf("no snapshot: tamper %+v (%v), want nothing", ts, err)
	}
}

// A run that changes more files than the kernel's event queue holds
// (fs.inotify.max_queued_events) is still listed from the watch, file by
// file, without a full walk: the events are read while the run goes on.
// And the protected file it edited among them is put back.
func TestManyChangesKeepTheWatch(t *testing.T) {
	dir, _, l, g, evs := guardLoop(t)
	n := 17000
	if data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		var q int
		if _, err := fmt.Sscan(string(data), &q); err == nil && q > 0 {
			n = q/2 + 1000 // each append below is two events (modify, close)
		}
	}
	if n > 100000 {
		t.Skipf("the kernel queues %d events: too many files to make here", 2*(n-1000))
	}
	for i := 0; i < n; i++ {
		write(t, dir, fmt.Sprintf("gen/d%03d/f%05d.txt", i/500, i), "a")
	}
	rc, rules := snapshotForRun(t, g, l)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, "gen", fmt.Sprintf("d%03d", i/500), fmt.Sprintf("f%05d.txt", i))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("b")
		f.Close()
	}
	write(t, dir, "add_test.go", "package x // PASS\n")
	changed, created, err := g.End(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range *evs {
		if ev.Kind == "change_watch" {
			t.Fatalf("the watch lost the run's changes: %s", ev.Message)
		}
	}
	if len(changed) != n+1 || len(created) != 0 {
		t.Fatalf("%d changed, %d created; want %d changed, none created", len(changed), len(created), n+1)
	}
	ts, err := g.Check(rc, created, rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].File != "add_test.go" || ts[0].What != "modified" {
		t.Fatalf("tamper %v, want add_test.go modified", ts)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "add_test.go")); string(b) != "package x // FAIL\n" {
		t.Fatalf("add_test.go after the check: %q", b)
	}
}

// Links lists the protected files that are symbolic links, kept up to date
// from the watch: a link made over a protected file between two runs is
// in the next list, and one put back to a file leaves it.
func TestLinksFollowTheChanges(t *testing.T) {
	dir, _, l, g, _ := guardLoop(t)
	files, _, err := g.Files(l)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "add_test.go")
	if got := g.Links(files); slices.Contains(got, p) || len(got) > 2 {
		t.Fatalf("links %v, want at most the loop file and a gate program", got)
	}
	base := len(g.Links(files))
	os.Remove(p)
	if err := os.Symlink("/etc/hostname", p); err != nil {
		t.Fatal(err)
	}
	if files, _, err = g.Files(l); err != nil {
		t.Fatal(err)
	}
	if got := g.Links(files); !slices.Contains(got, p) || len(got) != base+1 {
		t.Fatalf("links %v, want %s among them", got, p)
	}
	os.Remove(p)
	write(t, dir, "add_test.go", "package x // FAIL\n")
	if files, _, err = g.Files(l); err != nil {
		t.Fatal(err)
	}
	if got := g.Links(files); slices.Contains(got, p) || len(got) != base {
		t.Fatalf("links %v after the file is back, want %s gone", got, p)
	}
}
