package gitops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/record"
)

func stagedRepo(t testing.TB, files int) (string, *Committer) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q", "-b", "main")
	for i := 0; i < files; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprint(i)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("x"), 0o644)
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "-c", "gc.auto=0", "commit", "-qm", "start") // no gc left running on the temporary folder
	c := &Committer{Dir: dir, Name: "t", ident: []string{"-c", "user.name=looprinter", "-c", "user.email=l@example.com"}}
	return dir, c
}

// After its first commit (which stages the whole folder), the engine
// stages exactly the paths the agent runs changed: a new file, an edit, a
// removal; never an ignored file nor the records; and nothing it was not
// told about.
func TestCommitStagesWhatRunsChanged(t *testing.T) {
	dir, c := stagedRepo(t, 10)
	hook := c.Hook()
	os.WriteFile(filepath.Join(dir, "first.txt"), []byte("1"), 0o644)
	if err := hook(record.Event{Event: record.TaskPassed, Task: "T-001"}, func(record.Event) {}); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Git(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "A\tfirst.txt" {
		t.Fatalf("first commit: %q", got)
	}
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n"), 0o644)
	os.WriteFile(filepath.Join(dir, "d000", "f00001.txt"), []byte("edited"), 0o644)
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.WriteFile(filepath.Join(dir, "build.log"), []byte("log"), 0o644)
	os.MkdirAll(filepath.Join(dir, "working-records"), 0o700)
	os.WriteFile(filepath.Join(dir, "working-records", "x.jsonl"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(dir, "untold.txt"), []byte("u"), 0o644)
	hook(record.Event{Event: record.AgentEnd, FilesChanged: []string{"new.txt", "d000/f00001.txt", "gone.txt", "build.log", "working-records/x.jsonl", "never-existed.txt"}}, func(record.Event) {})
	if err := hook(record.Event{Event: record.TaskPassed, Task: "T-002"}, func(record.Event) {}); err != nil {
		t.Fatal(err)
	}
	got := testkit.Git(t, dir, "show", "--name-status", "--format=", "HEAD")
	if got != "M\td000/f00001.txt\nD\tgone.txt\nA\tnew.txt" {
		t.Fatalf("second commit:\n%s", got)
	}
	if s := testkit.Git(t, dir, "log", "-1", "--format=%s %an"); s != "looprinter t: T-002 built, gates not run yet looprinter" {
		t.Fatalf("message: %q", s)
	}
	last, _ := os.ReadFile(c.lastCommitPath())
	if strings.TrimSpace(string(last)) != testkit.Git(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("last commit %q", last)
	}
	// A rollback moves files the records do not name: the next commit
	// stages the folder.
	hook(record.Event{Event: record.Rollback}, func(record.Event) {})
	hook(record.Event{Event: record.TaskPassed, Task: "T-003"}, func(record.Event) {})
	if got := testkit.Git(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "A\tuntold.txt" {
		t.Fatalf("after a rollback: %q", got)
	}
}

// BenchmarkCommit: a commit of one changed file in a checkout of 50,000
// files, staged by name (the engine's commits after its first) and by a
// scan of the folder (its first, and what every commit did before).
func BenchmarkCommit(b *testing.B) {
	dir, c := stagedRepo(b, 50000)
	for _, mode := range []string{"named", "scan"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				os.WriteFile(filepath.Join(dir, "d001", "f00100.txt"), []byte(mode+fmt.Sprint(i)), 0o644)
				c.scanned = mode == "named"
				c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"d001/f00100.txt"}})
				if _, err := c.Commit("x", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A commit by name edits HEAD's tree (treeByName) and the index for the
// named paths only, and the result is what staging them in the index and
// git write-tree give: in a loop folder below the repository's top, with
// an executable bit, a link, a new nested folder and the last file of a
// folder removed; and the index then matches the commit exactly.
func TestCommitByNameEqualsTheIndex(t *testing.T) {
	top, _ := stagedRepo(t, 0)
	sub := filepath.Join(top, "loop")
	os.MkdirAll(filepath.Join(sub, "only"), 0o755)
	os.WriteFile(filepath.Join(sub, "only", "one.txt"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(sub, "keep.txt"), []byte("k"), 0o644)
	testkit.Git(t, top, "add", "-A")
	testkit.Git(t, top, "commit", "-qm", "loop")
	c := &Committer{Dir: sub, Name: "t", scanned: true, ident: []string{"-c", "user.name=looprinter", "-c", "user.email=l@example.com"}}
	os.WriteFile(filepath.Join(sub, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("keep.txt", filepath.Join(sub, "link"))
	os.MkdirAll(filepath.Join(sub, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(sub, "a", "b", "deep.txt"), []byte("d"), 0o644)
	os.Remove(filepath.Join(sub, "only", "one.txt"))
	os.Remove(filepath.Join(sub, "only"))
	os.WriteFile(filepath.Join(sub, "keep.txt"), []byte("changed"), 0o644)
	c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"run.sh", "link", "a/b/deep.txt", "only/one.txt", "keep.txt"}})
	paths := c.namedPaths()
	tree, err := c.treeByName(testkit.Git(t, top, "rev-parse", "HEAD"), paths)
	if err != nil {
		t.Fatalf("treeByName: %v", err)
	}
	c.settle()
	if idx := testkit.Git(t, top, "write-tree"); idx != tree {
		t.Errorf("the index's tree %s is not the commit's %s:\n%s", idx, tree, testkit.Git(t, top, "diff", "--stat", idx, tree))
	}
	want := "100644 blob\tloop/a/b/deep.txt\n100644 blob\tloop/keep.txt\n120000 blob\tloop/link\n100755 blob\tloop/run.sh"
	var got []string
	for _, line := range strings.Split(testkit.Git(t, top, "ls-tree", "-r", tree), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if strings.HasPrefix(name, "loop/") {
			got = append(got, f[0]+" "+f[1]+"\t"+name)
		}
	}
	if strings.Join(got, "\n") != want {
		t.Errorf("the tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	// Through Commit: the same, and git status has nothing to say.
	os.WriteFile(filepath.Join(sub, "keep.txt"), []byte("again"), 0o644)
	c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"run.sh", "link", "a/b/deep.txt", "only/one.txt", "keep.txt"}})
	if _, err := c.Commit("x", ""); err != nil {
		t.Fatal(err)
	}
	c.settle()
	if s := testkit.Git(t, top, "status", "--porcelain"); s != "" {
		t.Errorf("after the commit, git status: %q", s)
	}
	if got := testkit.Git(t, top, "show", "HEAD:loop/keep.txt"); got != "again" {
		t.Errorf("HEAD:loop/keep.txt = %q", got)
	}
}

// A path that became a folder (or a nested repository's) is not edited by
// name: the commit stages it in the index, as before.
func TestCommitByNameFallsBack(t *testing.T) {
	dir, c := stagedRepo(t, 3)
	c.scanned = true
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.MkdirAll(filepath.Join(dir, "gone.txt"), 0o755)
	os.WriteFile(filepath.Join(dir, "gone.txt", "inside"), []byte("i"), 0o644)
	c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"gone.txt/inside", "gone.txt"}})
	paths := c.namedPaths()
	if _, err := c.treeByName(testkit.Git(t, dir, "rev-parse", "HEAD"), paths); !errors.Is(err, errNotByName) {
		t.Fatalf("a file that became a folder: %v, want errNotByName", err)
	}
	c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"gone.txt/inside", "gone.txt"}})
	if _, err := c.Commit("x", ""); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Git(t, dir, "show", "HEAD:gone.txt/inside"); got != "i" {
		t.Errorf("HEAD:gone.txt/inside = %q", got)
	}
}

// By name, an ignored file is left out unless git tracks it: a tracked
// file that an ignore rule matches (added with --force) is committed when
// it changes, an untracked one is not.
func TestCommitByNameIgnoredButTracked(t *testing.T) {
	dir, c := stagedRepo(t, 1)
	os.WriteFile(filepath.Join(dir, "kept.log"), []byte("1"), 0o644)
	testkit.Git(t, dir, "add", "-f", "kept.log")
	testkit.Git(t, dir, "-c", "gc.auto=0", "commit", "-qm", "kept")
	c.scanned = true
	os.WriteFile(filepath.Join(dir, "kept.log"), []byte("2"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.log"), []byte("n"), 0o644)
	c.note(record.Event{Event: record.AgentEnd, FilesChanged: []string{"kept.log", "new.log"}})
	if _, err := c.Commit("x", ""); err != nil {
		t.Fatal(err)
	}
	c.settle()
	if got := testkit.Git(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "M\tkept.log" {
		t.Errorf("the commit: %q, want kept.log only", got)
	}
	if s := testkit.Git(t, dir, "status", "--porcelain"); s != "" {
		t.Errorf("git status: %q", s)
	}
}

// Another git process holding the index (an editor refreshing its status)
// is waited for: the commit that stages in the index goes through once the
// lock is gone, instead of stopping the loop.
func TestCommitWaitsForTheIndexLock(t *testing.T) {
	dir, c := stagedRepo(t, 1)
	lock := filepath.Join(dir, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n"), 0o644)
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(lock)
	}()
	if _, err := c.Commit("x", ""); err != nil { // the first commit stages the folder
		t.Fatalf("a commit while the index was locked for a moment: %v", err)
	}
	if got := testkit.Git(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "A\tnew.txt" {
		t.Errorf("the commit: %q", got)
	}
}
