//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// upperFixture lays a loop folder and an upper folder as an agent run
// leaves them: new and changed files, a new folder with files in it, a
// replaced folder, a link, a removed file (a whiteout, where this user can
// make one) and a refused path.
func upperFixture(t *testing.T) (Layer, bool) {
	t.Helper()
	root := t.TempDir()
	lay := Layer{Target: filepath.Join(root, "loop"), Upper: filepath.Join(root, "upper"), Work: filepath.Join(root, "work")}
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(lay.Target, "a.go"), "old a\n")
	write(filepath.Join(lay.Target, "gone.txt"), "gone\n")
	write(filepath.Join(lay.Target, "old", "x"), "old x\n")
	write(filepath.Join(lay.Target, "secret", "s"), "kept\n")
	os.MkdirAll(lay.Work, 0o700)
	write(filepath.Join(lay.Upper, "a.go"), "new a\n")
	write(filepath.Join(lay.Upper, "b.go"), "new b\n")
	write(filepath.Join(lay.Upper, "pkg", "c.go"), "c\n")
	write(filepath.Join(lay.Upper, "pkg", "sub", "d.go"), "d\n")
	write(filepath.Join(lay.Upper, "old", "y"), "y\n")
	write(filepath.Join(lay.Upper, "secret", "s"), "forged\n")
	os.Symlink("a.go", filepath.Join(lay.Upper, "link"))
	whiteout := unix.Mknod(filepath.Join(lay.Upper, "gone.txt"), unix.S_IFCHR, 0) == nil
	return lay, whiteout
}

// treeOf lists a folder: each path with its content or link target.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+to)
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			data, _ := os.ReadFile(p)
			lines = append(lines, rel+": "+strings.TrimSpace(string(data)))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func keepAllBut(rel string) bool { return !strings.HasPrefix(rel, "secret") }

// A kill at any step of an apply leaves the folder with none of the run's
// changes (the plan was not yet written) or, once ResumeApply has run, all
// of them: never a part.
func TestApplyIsAllOrNothing(t *testing.T) {
	ref, _ := upperFixture(t)
	if _, err := ApplyLayer(ref, keepAllBut, filepath.Join(t.TempDir(), "j")); err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, ref.Target)
	if !strings.Contains(want, "secret/s: kept") || !strings.Contains(want, "pkg/sub/d.go: d") {
		t.Fatalf("the reference apply is wrong:\n%s", want)
	}
	defer func() { dieBefore = nil }()
	for k := 0; ; k++ {
		lay, _ := upperFixture(t)
		journal := filepath.Join(t.TempDir(), "apply.journal")
		steps := 0
		dieBefore = func(i int) bool {
			steps = i + 1
			return i == k
		}
		_, err := ApplyLayer(lay, keepAllBut, journal)
		dieBefore = nil
		if err == nil {
			if k < steps {
				t.Fatalf("the apply did not die before step %d", k)
			}
			break // k is past the last step: the apply ran whole
		}
		if !errors.Is(err, errDied) {
			t.Fatal(err)
		}
		if _, err := os.Stat(journal); err != nil {
			t.Fatalf("died before step %d, but no journal is left: %v", k, err)
		}
		changes, found, err := ResumeApply(lay, journal)
		if err != nil || !found {
			t.Fatalf("resume after step %d: found %v, %v", k, found, err)
		}
		if got := treeOf(t, lay.Target); got != want {
			t.Errorf("died before step %d and resumed; the folder is\n%s\nwant\n%s", k, got, want)
		}
		if len(changes) == 0 {
			t.Errorf("resume after step %d lists no change", k)
		}
		if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the journal is left after the resume: %v", err)
		}
		if ents, _ := os.ReadDir(lay.Upper); len(ents) != 0 {
			t.Errorf("the layer is not empty after the resume")
		}
		if k > 20 {
			t.Fatal("more steps than the fixture has")
		}
	}
}

// A journal whose plan is torn (the kill came while it was written) means
// nothing was applied: ResumeApply finds nothing and the layer is the
// caller's to drop.
func TestResumeApplyTornPlan(t *testing.T) {
	lay, _ := upperFixture(t)
	journal := filepath.Join(t.TempDir(), "apply.journal")
	os.WriteFile(journal, []byte(`[{"p":"a.go","w":"writ`), 0o600)
	before := treeOf(t, lay.Target)
	_, found, err := ResumeApply(lay, journal)
	if err != nil || found {
		t.Fatalf("a torn plan: found %v, %v", found, err)
	}
	if got := treeOf(t, lay.Target); got != before {
		t.Errorf("a torn plan changed the folder:\n%s", got)
	}
	if _, found, err := ResumeApply(lay, filepath.Join(t.TempDir(), "none")); found || err != nil {
		t.Errorf("no journal: found %v, %v", found, err)
	}
}

// The apply checks the folders on a written file's way once per folder,
// and again after any step that is not a file's: a plan whose folder is
// turned into a link between two of its files never writes through it.
func TestCarryOutChecksTheWayAgainAfterALink(t *testing.T) {
	root := t.TempDir()
	target, outside := filepath.Join(root, "t"), filepath.Join(root, "outside")
	lay := Layer{Target: target, Upper: filepath.Join(root, "u"), Work: filepath.Join(root, "w")}
	for _, d := range []string{filepath.Join(target, "d"), outside, filepath.Join(lay.Upper, "d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(lay.Upper, "d", "a"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(lay.Upper, "d", "b"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(lay.Upper, "d", "c"), []byte("c"), 0o644)
	os.Symlink(outside, filepath.Join(lay.Upper, "e"))
	ops := []applyOp{
		{Rel: "d/a", What: "written", Mode: 0o644, Keep: true},
		{Rel: "d/c", What: "written", Mode: 0o644, Keep: true}, // the way known: applied all the same
		{Rel: "e", What: "link", Keep: true},
		{Rel: "d/b", What: "written", Mode: 0o644, Keep: true},
	}
	// Between the steps the folder d becomes a link out (as a crafted
	// step would make it): the link step clears what was known of the way.
	dieBefore = func(i int) bool {
		if i == 3 {
			if b, err := os.ReadFile(filepath.Join(target, "d", "c")); err != nil || string(b) != "c" {
				t.Errorf("d/c before the swap = %q, %v; want it applied", b, err)
			}
			os.RemoveAll(filepath.Join(target, "d"))
			os.Symlink(outside, filepath.Join(target, "d"))
		}
		return false
	}
	defer func() { dieBefore = nil }()
	out, err := carryOut(lay, ops, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "b")); err == nil {
		t.Fatal("the apply wrote d/b through a link")
	}
	if len(out) != 4 || !out[0].Applied || !out[1].Applied || out[3].Applied {
		t.Fatalf("changes %+v, want d/a and d/c applied and d/b refused", out)
	}
}

// bigUpperFixture is upperFixture with many files in several folders (so
// that their steps run in parallel, parFiles and more in a row), a
// replaced folder (where this user can mark one) whose files come after
// it, and a new folder.
func bigUpperFixture(t *testing.T) Layer {
	t.Helper()
	lay, _ := upperFixture(t)
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for d := range 6 {
		for f := range 60 {
			rel := filepath.Join("many", fmt.Sprintf("d%d", d), fmt.Sprintf("f%02d.go", f))
			if f%2 == 0 {
				write(filepath.Join(lay.Target, rel), "old\n")
			}
			write(filepath.Join(lay.Upper, rel), "new "+rel+"\n")
		}
	}
	write(filepath.Join(lay.Target, "rep", "gone"), "old\n")
	write(filepath.Join(lay.Target, "rep", "a"), "old a\n")
	for f := range 5 {
		write(filepath.Join(lay.Upper, "rep", fmt.Sprintf("n%d", f)), "new\n")
	}
	write(filepath.Join(lay.Upper, "rep", "a"), "new a\n")
	if unix.Setxattr(filepath.Join(lay.Upper, "rep"), "user.overlay.opaque", []byte("y"), 0) != nil {
		os.Remove(filepath.Join(lay.Target, "rep", "gone")) // no replaced folder here: the same tree either way
	}
	return lay
}

// The same with many files applied by several workers and marks that a
// kill loses: a kill before any step, and a second kill in the middle of
// the resume, end in the same folder as an apply never killed.
func TestApplyIsAllOrNothingInParallel(t *testing.T) {
	ref := bigUpperFixture(t)
	if _, err := ApplyLayer(ref, keepAllBut, filepath.Join(t.TempDir(), "j")); err != nil {
		t.Fatal(err)
	}
	want := treeOf(t, ref.Target)
	if !strings.Contains(want, "many/d5/f59.go: new many/d5/f59.go") || strings.Contains(want, "secret/s: forged") {
		t.Fatalf("the reference apply is wrong:\n%s", want)
	}
	if o := Opaque(filepath.Join(ref.Upper, "rep")); o && strings.Contains(want, "rep/gone") {
		t.Fatalf("the replaced folder kept a file:\n%s", want)
	}
	defer func() { dieBefore = nil }()
	var steps atomic.Int64
	// Every step at the start and the end (the replaced folder and its
	// files), every 23rd among the many files.
	next := func(k int) int {
		if k < 8 || k >= 370 {
			return k + 1
		}
		return k + 23
	}
	for k := 0; ; k = next(k) {
		lay := bigUpperFixture(t)
		journal := filepath.Join(t.TempDir(), "apply.journal")
		steps.Store(0)
		dieBefore = func(i int) bool {
			steps.Add(1)
			return i == k
		}
		_, err := ApplyLayer(lay, keepAllBut, journal)
		if err == nil {
			dieBefore = nil
			if int64(k) < steps.Load() {
				t.Fatalf("the apply did not die before step %d", k)
			}
			break
		}
		if !errors.Is(err, errDied) {
			t.Fatal(err)
		}
		// The resume is killed too, further on, then resumed again.
		k2 := k + 101
		dieBefore = func(i int) bool { return i == k2 }
		if _, found, err := ResumeApply(lay, journal); !found || err != nil && !errors.Is(err, errDied) {
			t.Fatalf("resume after step %d: found %v, %v", k, found, err)
		}
		dieBefore = nil
		if _, err := os.Stat(journal); err == nil {
			if _, found, err := ResumeApply(lay, journal); err != nil || !found {
				t.Fatalf("second resume after step %d: found %v, %v", k2, found, err)
			}
		}
		if got := treeOf(t, lay.Target); got != want {
			t.Errorf("died before step %d (and %d) and resumed; the folder is\n%s\nwant\n%s", k, k2, got, want)
		}
		if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the journal is left after the resume: %v", err)
		}
		if ents, _ := os.ReadDir(lay.Upper); len(ents) != 0 {
			t.Errorf("the layer is not empty after the resume")
		}
		if k > 1000 {
			t.Fatal("more steps than the fixture has")
		}
	}
}

// An apply keeps no special bits and applies no special file: a setuid,
// setgid or sticky file or folder of the layer reaches the target with its
// permissions only (named in Stripped), on the one-rename path, in a
// folder's run of files applied by workers and after a kill; a fifo, a
// socket and a device are never applied.
func TestApplyKeepsNoSpecialBits(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(fmt.Sprintf("many=%v", many), func(t *testing.T) {
			root := t.TempDir()
			lay := Layer{Target: filepath.Join(root, "loop"), Upper: filepath.Join(root, "upper"), Work: filepath.Join(root, "work")}
			for _, d := range []string{lay.Target, lay.Upper, lay.Work, filepath.Join(lay.Upper, "sub")} {
				os.MkdirAll(d, 0o755)
			}
			mk := func(rel string, mode os.FileMode) {
				p := filepath.Join(lay.Upper, rel)
				if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			mk("suid", 0o755|os.ModeSetuid)
			mk("sgid", 0o750|os.ModeSetgid)
			mk("sub/both", 0o700|os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
			mk("plain", 0o644)
			if many {
				for i := range parFiles + 10 {
					mk(fmt.Sprintf("sub/f%04d", i), 0o755|os.ModeSetuid)
				}
			}
			if err := os.Mkdir(filepath.Join(lay.Upper, "stickydir"), 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(lay.Upper, "stickydir"), 0o755|os.ModeSticky|os.ModeSetgid)
			mk("stickydir/x", 0o644)
			if err := unix.Mkfifo(filepath.Join(lay.Upper, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(lay.Upper, "sock")
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
				t.Fatal(err)
			}
			unix.Close(fd)
			device := unix.Mknod(filepath.Join(lay.Upper, "dev"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil
			block := unix.Mknod(filepath.Join(lay.Upper, "blk"), unix.S_IFBLK|0o666, int(unix.Mkdev(7, 0))) == nil

			changes, err := ApplyLayer(lay, func(string) bool { return true }, filepath.Join(root, "journal"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]LayerChange{}
			for _, c := range changes {
				got[c.Path] = c
			}
			check := func(rel string, perm os.FileMode, stripped string) {
				t.Helper()
				fi, err := os.Lstat(filepath.Join(lay.Target, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatalf("%s not applied: %v", rel, err)
				}
				if fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 || fi.Mode().Perm() != perm {
					t.Errorf("%s applied as %v, want %v", rel, fi.Mode(), perm)
				}
				if c := got[rel]; !c.Applied || c.Stripped != stripped {
					t.Errorf("%s: change %+v, want applied, stripped %q", rel, c, stripped)
				}
			}
			check("suid", 0o755, "setuid")
			check("sgid", 0o750, "setgid")
			check("sub/both", 0o700, "setuid, setgid, sticky")
			check("plain", 0o644, "")
			check("stickydir", 0o755, "setgid, sticky")
			check("stickydir/x", 0o644, "")
			if many {
				check("sub/f0000", 0o755, "setuid")
				check(fmt.Sprintf("sub/f%04d", parFiles+9), 0o755, "setuid")
			}
			specials := []string{"fifo", "sock"}
			if device {
				specials = append(specials, "dev")
			}
			if block {
				specials = append(specials, "blk")
			}
			for _, rel := range specials {
				if _, err := os.Lstat(filepath.Join(lay.Target, rel)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("special file %s applied (%v)", rel, err)
				}
				if c := got[rel]; c.Applied || c.Why != whySpecial {
					t.Errorf("special file %s: change %+v", rel, c)
				}
			}
		})
	}
}

// A kill in the middle of an apply that strips bits: the resumed apply
// strips them too.
func TestResumeApplyKeepsNoSpecialBits(t *testing.T) {
	root := t.TempDir()
	lay := Layer{Target: filepath.Join(root, "loop"), Upper: filepath.Join(root, "upper"), Work: filepath.Join(root, "work")}
	for _, d := range []string{lay.Target, lay.Upper, lay.Work} {
		os.MkdirAll(d, 0o755)
	}
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(lay.Upper, n)
		os.WriteFile(p, []byte(n), 0o755)
		os.Chmod(p, 0o755|os.ModeSetuid)
	}
	journal := filepath.Join(root, "journal")
	dieBefore = func(i int) bool { return i == 1 }
	_, err := ApplyLayer(lay, func(string) bool { return true }, journal)
	dieBefore = nil
	if !errors.Is(err, errDied) {
		t.Fatalf("want a kill, got %v", err)
	}
	changes, found, err := ResumeApply(lay, journal)
	if err != nil || !found {
		t.Fatal(found, err)
	}
	for _, c := range changes {
		fi, err := os.Lstat(filepath.Join(lay.Target, c.Path))
		if err != nil || fi.Mode()&os.ModeSetuid != 0 || c.Stripped != "setuid" {
			t.Errorf("%s: %v %v %+v", c.Path, fi.Mode(), err, c)
		}
	}
}

// A run that wrote the folder in place: the paths it names lose their
// special bits, a fifo and a socket are removed, nothing is done through
// a link, and a path it does not name is left alone.
func TestStripInPlace(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.Chmod(filepath.Join(dir, "d"), 0o755|os.ModeSetgid|os.ModeSticky)
	for _, f := range []string{"d/tool", "other", filepath.Join(elsewhere, "x")} {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, f)
		}
		os.WriteFile(p, []byte("x"), 0o755)
		os.Chmod(p, 0o755|os.ModeSetuid)
	}
	unix.Mkfifo(filepath.Join(dir, "d", "pipe"), 0o644)
	os.Symlink(elsewhere, filepath.Join(dir, "link"))
	got := StripInPlace(dir, []string{"d", "d/tool", "d/pipe", "link/x", "missing"})
	want := map[string]string{"d": "setgid, sticky", "d/tool": "setuid", "d/pipe": whySpecial}
	if len(got) != len(want) {
		t.Fatalf("changes %+v", got)
	}
	for _, c := range got {
		if w := want[c.Path]; w != c.Stripped && w != c.Why {
			t.Errorf("%s: %+v", c.Path, c)
		}
	}
	for _, p := range []string{filepath.Join(dir, "d"), filepath.Join(dir, "d", "tool")} {
		if fi, _ := os.Lstat(p); fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
			t.Errorf("%s keeps %v", p, fi.Mode())
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "d", "pipe")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the fifo stays")
	}
	for _, p := range []string{filepath.Join(dir, "other"), filepath.Join(elsewhere, "x")} {
		if fi, _ := os.Lstat(p); fi.Mode()&os.ModeSetuid == 0 {
			t.Errorf("%s not named or through a link, yet stripped", p)
		}
	}
}
