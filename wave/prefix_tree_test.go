//go:build linux

package wave

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// A prefix's tree is what the applies of its layers leave: a file one run
// wrote is that run's, one two runs wrote is merged against the folder's,
// a conflict builds no tree; once laid, the folder must hold it exactly.
func TestSimulatePrefixMergesAndHolds(t *testing.T) {
	dir, a, b, tmp := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	base := "one\ntwo\nthree\nfour\nfive\n"
	writeFile(t, filepath.Join(dir, "shared.txt"), base, 0o644)
	writeFile(t, filepath.Join(a, "shared.txt"), "ONE\ntwo\nthree\nfour\nfive\n", 0o644)
	writeFile(t, filepath.Join(b, "shared.txt"), "one\ntwo\nthree\nfour\nFIVE\n", 0o644)
	writeFile(t, filepath.Join(a, "src", "a.go"), "package a\n", 0o644)
	writeFile(t, filepath.Join(b, "run.sh"), "#!/bin/sh\n", 0o755)
	none := func(string, string) bool { return false }
	p, ok := SimulatePrefix(context.Background(), dir, []string{a, b}, none, filepath.Join(tmp, "merge"))
	if !ok {
		t.Fatal("no tree for two layers that merge cleanly")
	}
	if !p.Put("output/plan.json", []byte("{}\n"), 0o644) || p.Put("run.sh", nil, 0o644) {
		t.Fatal("Put: a new file goes in, a file a layer holds does not")
	}
	up := filepath.Join(tmp, "u")
	laid, ok := p.Lay(up)
	if !ok {
		t.Fatal("the tree could not be laid")
	}
	got, _ := os.ReadFile(filepath.Join(up, "shared.txt"))
	if string(got) != "ONE\ntwo\nthree\nfour\nFIVE\n" {
		t.Errorf("the file both runs wrote: %q, want both changes", got)
	}
	if fi, err := os.Stat(filepath.Join(up, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh laid without its mode: %v %v", fi, err)
	}
	for _, rel := range []string{"shared.txt", "src", "src/a.go", "run.sh", "output/plan.json"} {
		if !laid.Covers(rel) {
			t.Errorf("%s is not covered", rel)
		}
	}
	if laid.Covers("other.txt") {
		t.Error("a path no run wrote is covered")
	}
	// The folder as the applies leave it holds the tree; one byte or one
	// mode off, or a file missing, and it does not.
	applied := t.TempDir()
	writeFile(t, filepath.Join(applied, "shared.txt"), "ONE\ntwo\nthree\nfour\nFIVE\n", 0o644)
	writeFile(t, filepath.Join(applied, "src", "a.go"), "package a\n", 0o644)
	writeFile(t, filepath.Join(applied, "run.sh"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(applied, "output", "plan.json"), "{}\n", 0o644)
	os.Chmod(filepath.Join(applied, "src"), 0o755)
	if fi, _ := os.Stat(filepath.Join(a, "src")); fi != nil {
		os.Chmod(filepath.Join(applied, "src"), fi.Mode().Perm())
	}
	if !laid.Holds(applied) {
		t.Fatal("the applied folder does not hold the tree")
	}
	writeFile(t, filepath.Join(applied, "shared.txt"), "ONE\ntwo\nthree\nfour\nFIVE!\n", 0o644)
	if laid.Holds(applied) {
		t.Error("a changed byte still holds")
	}
	writeFile(t, filepath.Join(applied, "shared.txt"), "ONE\ntwo\nthree\nfour\nFIVE\n", 0o644)
	os.Chmod(filepath.Join(applied, "run.sh"), 0o644)
	if laid.Holds(applied) {
		t.Error("a changed mode still holds")
	}
	os.Chmod(filepath.Join(applied, "run.sh"), 0o755)
	os.Remove(filepath.Join(applied, "output", "plan.json"))
	if laid.Holds(applied) {
		t.Error("a missing file still holds")
	}
}

// Two runs that change the same line conflict: no tree; a path skip says
// no apply takes is left out.
func TestSimulatePrefixConflictAndSkip(t *testing.T) {
	dir, a, b, tmp := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "x.txt"), "same\n", 0o644)
	writeFile(t, filepath.Join(a, "x.txt"), "mine\n", 0o644)
	writeFile(t, filepath.Join(b, "x.txt"), "theirs\n", 0o644)
	none := func(string, string) bool { return false }
	if _, ok := SimulatePrefix(context.Background(), dir, []string{a, b}, none, tmp); ok {
		t.Error("a conflict built a tree")
	}
	skipX := func(_, rel string) bool { return rel == "x.txt" }
	p, ok := SimulatePrefix(context.Background(), dir, []string{a, b}, skipX, tmp)
	if !ok {
		t.Fatal("with x.txt skipped there is nothing to conflict")
	}
	laid, ok := p.Lay(filepath.Join(tmp, "u"))
	if !ok || laid.Covers("x.txt") {
		t.Errorf("a skipped path was laid: %v", ok)
	}
}
