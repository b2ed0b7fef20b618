package gitops

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/record"
)

func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func stagedRepo(t testing.TB, files int) (string, *Committer) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	for i := 0; i < files; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprint(i)), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("x"), 0o644)
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-qm", "start")
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
	if got := gitT(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "A\tfirst.txt" {
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
	got := gitT(t, dir, "show", "--name-status", "--format=", "HEAD")
	if got != "M\td000/f00001.txt\nD\tgone.txt\nA\tnew.txt" {
		t.Fatalf("second commit:\n%s", got)
	}
	if s := gitT(t, dir, "log", "-1", "--format=%s %an"); s != "looprinter t: T-002 passed looprinter" {
		t.Fatalf("message: %q", s)
	}
	last, _ := os.ReadFile(c.lastCommitPath())
	if strings.TrimSpace(string(last)) != gitT(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("last commit %q", last)
	}
	// A rollback moves files the records do not name: the next commit
	// stages the folder.
	hook(record.Event{Event: record.Rollback}, func(record.Event) {})
	hook(record.Event{Event: record.TaskPassed, Task: "T-003"}, func(record.Event) {})
	if got := gitT(t, dir, "show", "--name-status", "--format=", "HEAD"); got != "A\tuntold.txt" {
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
