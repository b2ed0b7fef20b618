//go:build !windows

package guard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

// guardFixture is a loop folder with one protected executable check and a
// file outside the folder that an attack might aim at.
func guardFixture(t *testing.T) (dir, priv, outside string, g *snapshot) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "loop")
	priv = filepath.Join(root, "priv")
	outside = filepath.Join(root, "outside.txt")
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "check.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	os.WriteFile(outside, []byte("outside\n"), 0o644)
	var err error
	g, err = takeSnapshot(dir, priv, []File{{Path: "tests/check.sh", Rule: "a rule"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, priv, outside, g
}

func checkRestored(t *testing.T, dir string, ts []Tamper, what string) {
	t.Helper()
	if len(ts) != 1 || ts[0].File != "tests/check.sh" || !strings.Contains(ts[0].What, what) || ts[0].Rule != "a rule" {
		t.Fatalf("tamper = %+v, want one %q of tests/check.sh by a rule", ts, what)
	}
	p := filepath.Join(dir, "tests", "check.sh")
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
		t.Fatalf("after restore: %v %v, want a regular 0755 file", fi, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Fatalf("content %q", b)
	}
}

// A protected file replaced by a link to a file outside the loop folder is
// put back as a file: the write never goes through the link.
func TestGuardSymlinkSwapNeverWritesThrough(t *testing.T) {
	dir, priv, outside, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "replaced")
	if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
		t.Fatalf("the file outside was written through the link: %q", b)
	}
}

// A parent folder swapped for a link out of the loop folder is no way out.
func TestGuardParentLinkSwap(t *testing.T) {
	dir, priv, outside, g := guardFixture(t)
	os.RemoveAll(filepath.Join(dir, "tests"))
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "tests"))
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "")
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "check.sh")); err == nil {
		t.Fatal("the check was written into the folder the link pointed at")
	}
}

func TestGuardDeletedAndChmodded(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	ts, _ := g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "deleted")

	os.Chmod(p, 0o644)
	ts, _ = g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "mode")
}

// An edit that keeps size and mtime (touch -r) is still seen: ctime moves.
func TestGuardSameSizeSameMtime(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	ts, _ := g.check(dir, priv, nil, nil, nil, nil)
	checkRestored(t, dir, ts, "modified")
}

// A fifo at a protected path is removed and the file put back, without a
// read that would block.
func TestGuardFifo(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, dir, ts, "fifo")
}

// A snapshot reads a protected file again only when it may have changed:
// not when its stat is the one the last snapshot (in memory, or on disk
// after a restart) recorded; and with the watch (restat), not even a stat
// for a file the watch saw no change to, unless it has other links or its
// rule changed. Observed through the blob store: a file read again is
// stored again.
func TestGuardSnapshotReadsOnlyWhatMayHaveChanged(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	files := []File{{Path: "tests/check.sh", Rule: "a rule"}}
	blobs := filepath.Join(priv, "blobs")
	stored := func() bool {
		_, err := os.Stat(loopdir.Private(priv).Blob(g.Entries[0].Sum))
		return err == nil
	}
	if !stored() {
		t.Fatal("the first snapshot stored no copy")
	}
	os.RemoveAll(blobs)
	if _, err := takeSnapshot(dir, priv, files, g, nil); err != nil || stored() {
		t.Fatalf("unchanged stat, the snapshot in memory: read again (%v)", err)
	}
	if _, err := takeSnapshot(dir, priv, files, nil, nil); err != nil || stored() {
		t.Fatalf("unchanged stat, the snapshot on disk: read again (%v)", err)
	}
	// The same snapshot as before, but its file is gone: written again,
	// so that an engine started after a crash finds it.
	os.Remove(loopdir.Private(priv).Protected())
	if _, err := takeSnapshot(dir, priv, files, g, nil); err != nil || loadSnapshot(priv) == nil {
		t.Fatalf("the snapshot's file was not written again (%v)", err)
	}

	// Changed on disk, but the watch says it was not: the entry is kept
	// as it was, without a stat.
	p := filepath.Join(dir, "tests", "check.sh")
	os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	quiet := func(string) bool { return false }
	g2, err := takeSnapshot(dir, priv, files, g, quiet)
	if err != nil || len(g2.Entries) != 1 || g2.Entries[0] != g.Entries[0] {
		t.Fatalf("watch quiet: entries %+v (%v), want the old entry kept", g2.Entries, err)
	}
	// The watch saw it change: read again.
	g3, err := takeSnapshot(dir, priv, files, g, func(string) bool { return true })
	if err != nil || len(g3.Entries) != 1 || g3.Entries[0].Sum == g.Entries[0].Sum {
		t.Fatalf("watch saw a change: entries %+v (%v), want the new content", g3.Entries, err)
	}
	// Its rule changed: a new entry under the new rule, however quiet the
	// watch.
	g4, err := takeSnapshot(dir, priv, []File{{Path: "tests/check.sh", Rule: "another rule"}}, g3, quiet)
	if err != nil || len(g4.Entries) != 1 || g4.Entries[0].Rule != "another rule" {
		t.Fatalf("rule changed: entries %+v (%v), want the new rule", g4.Entries, err)
	}
	// Other links: compared by stat every time, whatever the watch says.
	os.Link(p, filepath.Join(t.TempDir(), "link"))
	g5, err := takeSnapshot(dir, priv, files, g4, func(string) bool { return true })
	if err != nil || g5.Entries[0].Nlink != 2 {
		t.Fatalf("linked: entries %+v (%v), want 2 links", g5.Entries, err)
	}
	os.WriteFile(p, []byte("#!/bin/sh\nexit 2\n"), 0o755)
	g6, err := takeSnapshot(dir, priv, files, g5, quiet)
	if err != nil || g6.Entries[0].Sum == g5.Entries[0].Sum {
		t.Fatalf("linked, watch quiet: entries %+v (%v), want the new content", g6.Entries, err)
	}
}

// A protected file written again with the same content (a new mtime, the
// same bytes) is no tampering: nothing is restored or reported.
func TestGuardSameContentIsNoChange(t *testing.T) {
	dir, priv, _, g := guardFixture(t)
	p := filepath.Join(dir, "tests", "check.sh")
	os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	future := time.Now().Add(time.Hour)
	os.Chtimes(p, future, future)
	ts, err := g.check(dir, priv, nil, nil, nil, nil)
	if err != nil || len(ts) != 0 {
		t.Fatalf("tamper %+v (%v), want none for the same content", ts, err)
	}
}

// With the watch (restat), a file it saw no change to is not looked at,
// unless the file has other hard links (a write through a link outside
// the loop folder is seen by no folder watch); what is found comes sorted
// by path.
func TestGuardWatchQuietSkipsOnlySingleLinkFiles(t *testing.T) {
	root := t.TempDir()
	dir, priv := filepath.Join(root, "loop"), filepath.Join(root, "priv")
	os.MkdirAll(dir, 0o755)
	for _, n := range []string{"b_test.go", "a_test.go", "c_test.go"} {
		os.WriteFile(filepath.Join(dir, n), []byte("package x\n"), 0o644)
	}
	os.Link(filepath.Join(dir, "c_test.go"), filepath.Join(root, "c-link"))
	files := []File{{Path: "a_test.go", Rule: "r"}, {Path: "b_test.go", Rule: "r"}, {Path: "c_test.go", Rule: "r"}}
	g, err := takeSnapshot(dir, priv, files, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	edit := func() {
		for _, n := range []string{"b_test.go", "a_test.go"} {
			os.WriteFile(filepath.Join(dir, n), []byte("package x // weakened\n"), 0o644)
		}
		os.WriteFile(filepath.Join(root, "c-link"), []byte("package x // weakened\n"), 0o644)
	}
	edit()
	quiet := func(string) bool { return false }
	ts, err := g.check(dir, priv, nil, nil, nil, quiet)
	if err != nil || len(ts) != 1 || ts[0].File != "c_test.go" {
		t.Fatalf("watch quiet: tamper %+v (%v), want only c_test.go (other links)", ts, err)
	}
	// The restore put a new c_test.go in place: edit it directly.
	for _, n := range []string{"c_test.go", "b_test.go", "a_test.go"} {
		os.WriteFile(filepath.Join(dir, n), []byte("package x // weakened\n"), 0o644)
	}
	ts, err = g.check(dir, priv, nil, nil, nil, nil)
	var got []string
	for _, x := range ts {
		got = append(got, x.File)
	}
	if err != nil || strings.Join(got, " ") != "a_test.go b_test.go c_test.go" {
		t.Fatalf("no watch: tamper %v (%v), want a_test.go b_test.go c_test.go in that order", got, err)
	}
}

// A protected file deep in folders the agent removed, or replaced by a
// file, is put back with every folder on the way.
func TestGuardRestoresFoldersOnTheWay(t *testing.T) {
	for name, attack := range map[string]func(dir string){
		"folders removed": func(dir string) { os.RemoveAll(filepath.Join(dir, "a")) },
		"a file in a folder's place": func(dir string) {
			os.RemoveAll(filepath.Join(dir, "a"))
			os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644)
		},
		"a file deeper": func(dir string) {
			os.RemoveAll(filepath.Join(dir, "a", "b"))
			os.WriteFile(filepath.Join(dir, "a", "b"), []byte("x"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir, priv := filepath.Join(root, "loop"), filepath.Join(root, "priv")
			os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755)
			p := filepath.Join(dir, "a", "b", "c", "d_test.go")
			os.WriteFile(p, []byte("package c\n"), 0o644)
			g, err := takeSnapshot(dir, priv, []File{{Path: "a/b/c/d_test.go", Rule: "r"}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			attack(dir)
			ts, err := g.check(dir, priv, nil, nil, nil, nil)
			if err != nil || len(ts) != 1 || ts[0].What != "deleted" {
				t.Fatalf("tamper %+v (%v), want a/b/c/d_test.go deleted and restored", ts, err)
			}
			if b, err := os.ReadFile(p); string(b) != "package c\n" {
				t.Fatalf("after the restore: %q (%v)", b, err)
			}
			// Each folder made again is an ordinary folder (0755 under
			// the umask), as the agent's own mkdir would make it.
			ref := filepath.Join(root, "ref")
			os.Mkdir(ref, 0o755)
			want, _ := os.Stat(ref)
			for _, f := range []string{"a", "a/b", "a/b/c"} {
				if fi, err := os.Lstat(filepath.Join(dir, f)); err != nil || !fi.IsDir() || fi.Mode().Perm() != want.Mode().Perm() {
					t.Errorf("%s after the restore: %v (%v), want a folder of mode %v", f, fi.Mode(), err, want.Mode().Perm())
				}
			}
		})
	}
}

// ReadBounded reads a file of exactly max bytes whole and refuses one
// byte more.
func TestGuardReadBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if b, err := ReadBounded(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("5 bytes, max 5: %q (%v), want them all", b, err)
	}
	if b, err := ReadBounded(p, 4); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("5 bytes, max 4: %q (%v), want refused", b, err)
	}
}
