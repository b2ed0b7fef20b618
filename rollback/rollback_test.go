package rollback

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/internal/testkit"
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/testcount"
)

func TestBestRanksTestsThenChecksLatestOfEquals(t *testing.T) {
	c := func(commit string, tests, checks int, gamed bool) Checkpoint {
		cp := Checkpoint{Commit: commit, Checks: map[string]bool{}, Tests: map[string]int{"t": tests}, Gamed: gamed}
		for i := 0; i < checks; i++ {
			cp.Checks[string(rune('a'+i))] = true
		}
		return cp
	}
	for _, tc := range []struct {
		name string
		cps  []Checkpoint
		want string
	}{
		{"more tests beat more checks", []Checkpoint{c("a", 10, 1, false), c("b", 8, 3, false)}, "a"},
		{"as many tests: more checks", []Checkpoint{c("a", 5, 1, false), c("b", 5, 2, false)}, "b"},
		{"equals: the latest", []Checkpoint{c("a", 5, 2, false), c("b", 5, 2, false)}, "b"},
		{"gamed never", []Checkpoint{c("a", 1, 1, false), c("b", 9, 9, true)}, "a"},
	} {
		l := &Ledger{Checkpoints: tc.cps}
		got, ok := l.Best()
		if !ok || got.Commit != tc.want {
			t.Errorf("%s: best %q (%v), want %q", tc.name, got.Commit, ok, tc.want)
		}
	}
	if _, ok := (&Ledger{Checkpoints: []Checkpoint{c("g", 1, 1, true)}}).Best(); ok {
		t.Error("a ledger of gamed checkpoints has a best state")
	}
}

func TestNoteTestsKeepsOnlyKnownCounts(t *testing.T) {
	tests := CopyTests(map[string]int{"old": 4})
	NoteTests(tests, judge.CheckResult{Check: record.Check{Command: "known"}, Tests: testcount.Counts{Known: true, Passed: 7}})
	NoteTests(tests, judge.CheckResult{Check: record.Check{Command: "old"}})
	if tests["known"] != 7 || tests["old"] != 4 || len(tests) != 2 {
		t.Fatalf("tests %v", tests)
	}
}

func TestKeptLinesOldestFirst(t *testing.T) {
	now := time.Now()
	lines := KeptLines([]KeptRef{
		{Ref: "r2", Commit: "bbbb", Why: "second", At: now},
		{Ref: "r1", Commit: "aaaa", Why: "first", Commits: []string{"aaaa one"}, At: now.Add(-time.Minute)},
	})
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "r1 (aaaa): first; commits: aaaa one") || !strings.HasPrefix(lines[1], "r2 (bbbb): second") {
		t.Fatalf("lines %q", lines)
	}
}

// A keeper over a real repository: a checkpoint at the engine's commit, a
// later commit that breaks its check undone onto a ref, the ref guarded.
func TestKeeperUndoesABrokenRunAndGuardsItsRef(t *testing.T) {
	testkit.Need(t, "git")
	dir := t.TempDir()
	git := func(args ...string) string { t.Helper(); return testkit.Git(t, dir, args...) }
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(loopdir.RecordsDir+"/\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("good\n"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "good")
	good := git("rev-parse", "HEAD")
	priv := string(loopdir.PrivateOf(dir))
	os.MkdirAll(priv, 0o700)
	setLast := func(c string) {
		if err := os.WriteFile(loopdir.PrivateOf(dir).LastCommit(), []byte(c+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setLast(good)
	var events []record.Event
	k := &Keeper{Dir: dir, Priv: priv, Name: "demo", Marks: &Marks{}, Emit: func(e record.Event) { events = append(events, e) },
		Passed: func() []string { return []string{"T-001"} }, At: func() (int, int) { return 1, 2 }}
	check := "grep -q good a.txt"
	k.NoteCheckpoint([]judge.CheckResult{{Check: record.Check{Command: check, Pass: true}}}, false, nil)
	led := Load(priv)
	if len(led.Checkpoints) != 1 || led.Checkpoints[0].Commit != good || led.Checkpoints[0].Cycle != 1 || led.Checkpoints[0].Iteration != 2 {
		t.Fatalf("checkpoints %+v", led.Checkpoints)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("bad\n"), 0o644)
	git("commit", "-qam", "bad")
	bad := git("rev-parse", "HEAD")
	setLast(bad)
	msg, results := k.UndoBroken(context.Background(), "T-002", []judge.CheckResult{{Check: record.Check{Command: check, Pass: false, ExitCode: 1}}})
	if !strings.HasPrefix(msg, "ROLLED BACK: this approach broke `"+check+"`") || results != nil {
		t.Fatalf("message %q, results %v", msg, results)
	}
	if head := git("rev-parse", "HEAD"); head != good {
		t.Fatalf("HEAD %s, want the checkpoint %s", head, good)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "good\n" {
		t.Fatalf("a.txt %q after the move back", data)
	}
	ref := RefPrefix("demo") + "rollback-1"
	if got := git("rev-parse", ref); got != bad {
		t.Fatalf("%s names %s, want the undone commit %s", ref, got, bad)
	}
	if k.LastCommit() != good {
		t.Fatalf("last commit %s", k.LastCommit())
	}
	// An agent moves the ref: it is put back, a violation.
	git("update-ref", ref, good)
	k.GuardRefs()
	if got := git("rev-parse", ref); got != bad {
		t.Fatalf("moved ref not put back: %s", got)
	}
	last := events[len(events)-1]
	if last.Event != record.Violation || last.Kind != "ref_moved" {
		t.Fatalf("no violation for the moved ref: %+v", last)
	}
	// Nothing broke: results come back for the next checkpoint.
	ok := []judge.CheckResult{{Check: record.Check{Command: check, Pass: true}}}
	if msg, res := k.UndoBroken(context.Background(), "T-003", ok); msg != "" || len(res) != 1 {
		t.Fatalf("a run that broke nothing: %q %v", msg, res)
	}
}

// A stop with no checkpoint says why it cannot go back, when it knows.
func TestSettleBestWithoutCheckpointSaysWhy(t *testing.T) {
	dir := t.TempDir()
	priv := string(loopdir.PrivateOf(dir))
	os.MkdirAll(priv, 0o700)
	var events []record.Event
	k := &Keeper{Dir: dir, Priv: priv, Name: "demo", Marks: &Marks{Uncommitted: []string{"run.log"}}, Emit: func(e record.Event) { events = append(events, e) }}
	s := k.SettleBest("BUDGET SPENT")
	if s.Kept != nil || len(s.Next) != 1 || !strings.Contains(s.Next[0], "run.log changed outside the engine's commits") {
		t.Fatalf("settled %+v", s)
	}
	if len(events) != 1 || events[0].Kind != "rollback_skipped" {
		t.Fatalf("events %+v", events)
	}
	k.Marks = &Marks{}
	if s := k.SettleBest("BUDGET SPENT"); s.Kept != nil || len(s.Next) != 0 {
		t.Fatalf("nothing to say, said %+v", s)
	}
}
