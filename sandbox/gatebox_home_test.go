//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A gate after a build run, as the loops' own folders are laid out: HOME
// (bound in the view) inside the tree, the run's layer under the checks'.
// As an ordinary user every mount the server's checks see is locked
// (bubblewrap's user namespace does not own the view's mounts), and
// overlayfs refused the tree, a folder holding one, as a lower folder
// (EINVAL): each check then ran no shell. Both checks run and see the
// tree as the run left it; neither sees the other's writes.
func TestBoxServerHomeInTree(t *testing.T) {
	f := newBoxFixture(t)
	need(t, Bwrap)
	home := filepath.Join(f.tree, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOFLAGS=-count=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(f.priv, "engine", "run", "u")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "deliverable.txt"), []byte("built\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.home = home
	f.env = append(withoutEnv(f.env, "HOME"), "HOME="+home)
	b := f.box(t, Bwrap, CheckBoxOptions{Lower: []string{run}})
	line := `cat deliverable.txt; cat "$HOME/.config/go/env"; [ -e mark ] && echo "seen: mark"; echo x > mark`
	for round := 0; round < 2; round++ {
		out, code := serveBox(t, b, f.tree, line, f.env)
		if code != 0 || !strings.Contains(out, "built") || !strings.Contains(out, "GOFLAGS=-count=1") || strings.Contains(out, "seen:") {
			t.Fatalf("round %d: the check should see the run's tree and HOME, and nothing of the check before (exit %d):\n%s", round, code, out)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(f.tree, "deliverable.txt")); string(data) != "original\n" {
		t.Fatalf("the tree was written: %q", data)
	}
}

// The work tree around the checks' tree (Around), under a folder each
// check gets fresh (/tmp): the server copies its mount for every check.
// As an ordinary user that mount holds locked mounts (the tree's, the
// hidden folders'), which a copy of the mount alone may not leave out
// (EINVAL): no check ran. Both checks run, see the folder around the
// tree and the tree, and nothing of the check before.
func TestBoxServerAroundUnderTmp(t *testing.T) {
	tmp, err := os.MkdirTemp("/tmp", "looprinter-around-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp) // the fixture's folders lie under /tmp
	f := newBoxFixture(t)
	need(t, Bwrap)
	around := filepath.Dir(f.tree)
	if err := os.WriteFile(filepath.Join(around, "beside.txt"), []byte("beside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := f.box(t, Bwrap, CheckBoxOptions{Around: around})
	line := `cat ../beside.txt deliverable.txt; [ -e mark ] && echo "seen: mark"; echo x > mark`
	for round := 0; round < 2; round++ {
		out, code := serveBox(t, b, f.tree, line, f.env)
		if code != 0 || !strings.Contains(out, "beside") || !strings.Contains(out, "original") || strings.Contains(out, "seen:") {
			t.Fatalf("round %d: the check should see the work tree around it and its tree, and nothing of the check before (exit %d):\n%s", round, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(f.tree, "mark")); err == nil {
		t.Fatal("the tree was written")
	}
}

// A cache inside a folder HOME keeps (a Go module cache inside the folder
// of a PATH entry, ~/go): the kept folder's own layer lies over the real
// folder, which in the view holds the cache's. As an ordinary user
// overlayfs refused it (a locked mount inside, EINVAL): no check ran.
// The check runs the kept program and reads the cache.
func TestBoxServerKeptHoldsCache(t *testing.T) {
	f := newBoxFixture(t)
	need(t, Bwrap)
	bin := filepath.Join(f.home, "go", "bin")
	mod := filepath.Join(f.home, "go", "pkg", "mod")
	for _, d := range []string{bin, mod} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "tool"), []byte("#!/bin/sh\necho tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "m.txt"), []byte("mod-entry\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.env = append(withoutEnv(withoutEnv(f.env, "PATH"), "GOMODCACHE"), "PATH="+bin+":/usr/bin:/bin", "GOMODCACHE="+mod)
	b := f.box(t, Bwrap, CheckBoxOptions{})
	for round := 0; round < 2; round++ {
		out, code := serveBox(t, b, f.tree, `tool; cat "$GOMODCACHE/m.txt"; [ -e "$GOMODCACHE/mark" ] && echo "seen: mark"; echo x > "$GOMODCACHE/mark"`, f.env)
		if code != 0 || !strings.Contains(out, "tool-ran") || !strings.Contains(out, "mod-entry") || strings.Contains(out, "seen:") {
			t.Fatalf("round %d: the check should run the kept program and read the cache, and see nothing of the check before (exit %d): %s", round, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, "mark")); err == nil {
		t.Fatal("the cache was written")
	}
}
