package safegit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// SnapshotTree takes the work tree as it is (an untracked file too)
// without the loop's records, and leaves the user's index as it was.
func TestSnapshotTreeLeavesRecordsAndIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"}} {
		if _, err := Run(ctx, dir, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	Run(ctx, dir, nil, "add", "a")
	if _, err := Run(ctx, dir, nil, "commit", "-qm", "one"); err != nil {
		t.Fatal(err)
	}
	head := Head(ctx, dir)
	if head == "" {
		t.Fatal("no HEAD after a commit")
	}
	os.WriteFile(filepath.Join(dir, "b"), []byte("2"), 0o644)
	os.MkdirAll(filepath.Join(dir, loopdir.RecordsDir), 0o755)
	os.WriteFile(filepath.Join(dir, loopdir.RecordsDir, "state.json"), []byte("{}"), 0o644)
	tree, err := SnapshotTree(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := Line(ctx, dir, "ls-tree", "--name-only", tree)
	if err != nil || names != "a\nb" {
		t.Errorf("snapshot holds %q (%v), want a and b, not %s", names, err, loopdir.RecordsDir)
	}
	if staged, _ := Line(ctx, dir, "diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("the snapshot staged %q in the user's index", staged)
	}
}

// The snapshot does not depend on what git tracks or ignores: with
// working-records/ in .gitignore and a records file tracked all the same
// (the fleet commits them; a user may by mistake), it still succeeds and
// leaves the records out; the files in except are left out too, tracked or
// not.
func TestSnapshotTreeTrackedRecords(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"}} {
		if _, err := Run(ctx, dir, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	recs := filepath.Join(dir, loopdir.RecordsDir)
	os.MkdirAll(recs, 0o755)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(loopdir.RecordsDir+"/\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.log"), []byte("committed"), 0o644)
	os.WriteFile(filepath.Join(recs, "old.jsonl"), []byte("{}\n"), 0o644)
	Run(ctx, dir, nil, "add", ".gitignore", "a", "run.log")
	if _, err := Run(ctx, dir, nil, "add", "-f", loopdir.RecordsDir+"/old.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, nil, "commit", "-qm", "one"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(recs, "old.jsonl"), []byte("{}\n{}\n"), 0o644)
	os.WriteFile(filepath.Join(recs, "new.jsonl"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte("2"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.log"), []byte("the run's output"), 0o644)
	os.WriteFile(filepath.Join(dir, "out.txt"), []byte("untracked"), 0o644)
	tree, err := SnapshotTree(ctx, dir)
	if err != nil {
		t.Fatalf("snapshot with a tracked records file: %v", err)
	}
	names, err := Line(ctx, dir, "ls-tree", "--name-only", tree)
	if err != nil || names != ".gitignore\na\nb\nout.txt\nrun.log" {
		t.Errorf("snapshot holds %q (%v), want .gitignore a b out.txt run.log, not %s", names, err, loopdir.RecordsDir)
	}
	tree, err = SnapshotTreeExcept(ctx, dir, []string{"run.log", "out.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := Line(ctx, dir, "ls-tree", "--name-only", tree); names != ".gitignore\na\nb" {
		t.Errorf("snapshot without the user's files holds %q", names)
	}
}

// A snapshot goes through when the user's index holds a records file and a
// user's file staged and then written again (the index then differs from
// both HEAD and the file, which git rm --cached refuses without -f): both
// are left out, and the user's index is left as it was.
func TestSnapshotTreeStagedThenChanged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"}} {
		if _, err := Run(ctx, dir, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	recs := filepath.Join(dir, loopdir.RecordsDir)
	os.MkdirAll(recs, 0o755)
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.log"), []byte("one"), 0o644)
	os.WriteFile(filepath.Join(recs, "state.json"), []byte("{}"), 0o644)
	if _, err := Run(ctx, dir, nil, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, nil, "commit", "-qm", "one"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run.log", filepath.Join(loopdir.RecordsDir, "state.json")} {
		os.WriteFile(filepath.Join(dir, f), []byte("two"), 0o644)
		if _, err := Run(ctx, dir, nil, "add", "--", f); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), []byte("three"), 0o644)
	}
	staged, _ := Line(ctx, dir, "diff", "--cached", "--name-only")
	tree, err := SnapshotTreeExcept(ctx, dir, []string{"run.log"})
	if err != nil {
		t.Fatalf("snapshot with files staged and changed again: %v", err)
	}
	if names, _ := Line(ctx, dir, "ls-tree", "--name-only", tree); names != "a" {
		t.Errorf("snapshot holds %q, want a alone", names)
	}
	if after, _ := Line(ctx, dir, "diff", "--cached", "--name-only"); after != staged {
		t.Errorf("the user's index changed: staged %q, was %q", after, staged)
	}
}
