package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// A snapshot of the work tree that fails is never swallowed: a warning at
// the gate (kind checkpoint_failed, git's message), and the stop says it
// cannot go back to the best state, and why (kind rollback_skipped).
func TestSnapshotFailureSaid(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	git("add", "a.txt")
	git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
	// An index git cannot read: every snapshot fails.
	os.WriteFile(filepath.Join(dir, ".git", "index"), []byte("not an index"), 0o644)
	l := &spec.Loop{Name: "snap", Dir: dir}
	st := &State{}
	var events []record.Event
	rb := &rollback{dir: dir, priv: string(loopdir.PrivateOf(dir)), st: st,
		spec: func() *spec.Loop { return l }, emit: func(ev record.Event) { events = append(events, ev) },
		writeJudged: func() error { return nil }, noteWriteErr: func(error) {}}
	rb.noteCheckpoint([]CheckResult{{}}, true, nil)
	rb.noteCheckpoint([]CheckResult{{}}, true, nil)
	warned := 0
	for _, ev := range events {
		if ev.Event == record.Warning && ev.Kind == "checkpoint_failed" {
			warned++
			if !strings.Contains(ev.Message, "cannot be snapshotted") {
				t.Errorf("warning %q does not say why", ev.Message)
			}
		}
	}
	if warned != 1 {
		t.Fatalf("%d checkpoint_failed warnings for the same failure twice, want 1: %+v", warned, events)
	}
	if st.SnapshotErr == "" {
		t.Fatal("the failure is not kept for the stop")
	}
	o := &Outcome{Reason: ReasonBudget}
	if kept := rb.settleBest(o); kept != nil {
		t.Fatalf("rolled back with no checkpoint: %+v", kept)
	}
	if len(o.Next) == 0 || !strings.Contains(o.Next[len(o.Next)-1], "cannot go back to the best state") || !strings.Contains(o.Next[len(o.Next)-1], st.SnapshotErr) {
		t.Fatalf("the stop does not say why it cannot roll back: %q", o.Next)
	}
	last := events[len(events)-1]
	if last.Kind != "rollback_skipped" {
		t.Fatalf("no rollback_skipped record: %+v", last)
	}
}

// A checkpoint is taken at the engine's last commit when the branch
// carries the records (a fleet commits them at every step) and commits of
// records came after it: the tree of that commit without its records is
// the work tree's, though its records differ from both HEAD's and the
// files (git rm --cached refuses them without -f).
func TestCheckpointAtCommitBelowRecordsCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	state := filepath.Join(dir, loopdir.RecordsDir, "state.json")
	git("init", "-q")
	os.MkdirAll(filepath.Dir(state), 0o755)
	os.WriteFile(state, []byte("1"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "step 1")
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello"), 0o644)
	git("add", "hello.txt")
	git("commit", "-qm", "task")
	task := git("rev-parse", "HEAD")
	os.WriteFile(state, []byte("2"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "step 2")
	os.WriteFile(state, []byte("3"), 0o644)
	priv := string(loopdir.PrivateOf(dir))
	os.MkdirAll(priv, 0o700)
	if err := os.WriteFile(loopdir.PrivateOf(dir).LastCommit(), []byte(task+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &spec.Loop{Name: "fleet", Dir: dir}
	st := &State{}
	var events []record.Event
	rb := &rollback{dir: dir, priv: priv, st: st,
		spec: func() *spec.Loop { return l }, emit: func(ev record.Event) { events = append(events, ev) },
		writeJudged: func() error { return nil }, noteWriteErr: func(error) {}}
	rb.noteCheckpoint([]CheckResult{{Check: record.Check{Command: "grep -q hello hello.txt", Pass: true}}}, false, nil)
	if st.SnapshotErr != "" {
		t.Fatalf("no checkpoint: %s", st.SnapshotErr)
	}
	led := loadLedger(priv)
	if len(led.Checkpoints) != 1 || led.Checkpoints[0].Commit != task {
		t.Fatalf("checkpoints %+v, want one at the task commit %s (events %+v)", led.Checkpoints, task, events)
	}
}
