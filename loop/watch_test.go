package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spec"
)

// shellAdapter runs a shell script as the agent, in the loop folder, the
// way a hostile agent would act: a real process, its own writes.
type shellAdapter struct{ script string }

func (a *shellAdapter) Name() string { return "shell" }

func (a *shellAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	return agent.Invocation{Path: "/bin/sh", Args: []string{"-c", a.script}, Env: []string{"PATH=/usr/bin:/bin"}}, nil
}

func (a *shellAdapter) NewParser(agent.Request) agent.Parser { return shellParser{} }

type shellParser struct{}

func (shellParser) Line([]byte) []agent.ToolEvent { return nil }

func (shellParser) Finish(x agent.Exit) agent.Result {
	if x.Code != 0 {
		return agent.Result{Status: agent.StatusOK, FinalMessage: "exit " + fmt.Sprint(x.Code) + ": " + x.StderrTail}
	}
	return agent.Result{Status: agent.StatusOK}
}

var shellBackends atomic.Int64

// runShellAgent runs a ralph loop of one attempt (sandbox off: the engine's
// own comparison is what is under test) whose agent is script. The verify
// check passes only when pkg/deep/zz_test.go no longer says FAIL, so a
// protected edit that went unseen would end the loop DONE.
func runShellAgent(t *testing.T, dir, script, extra string) (*Outcome, []record.Event) {
	t.Helper()
	return runShellAgentIn(t, t.TempDir(), dir, script, extra)
}

// runShellAgentIn is runShellAgent with the engine's state in state.
func runShellAgentIn(t *testing.T, state, dir, script, extra string) (*Outcome, []record.Event) {
	t.Helper()
	t.Setenv("LOOPRINTER_STATE_DIR", state)
	name := fmt.Sprintf("shell%d", shellBackends.Add(1))
	agent.Register(name, func() agent.Adapter { return &shellAdapter{script: script} })
	budget := "budget: {iterations: 1}\n"
	if strings.Contains(extra, "budget:") {
		budget = ""
	}
	src := "shape: ralph\nobjective: the test passes\nagent: {backend: command, command: x}\nsandbox: off\n" +
		budget + "verify: [\"! grep -q FAIL pkg/deep/zz_test.go\"]\n" + extra
	os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(src), 0o644)
	l, err := spec.Parse([]byte(src), filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l.Agent.Backend = name
	var evs []record.Event
	out, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){func(e record.Event) { evs = append(evs, e) }}})
	if err != nil {
		t.Fatal(err)
	}
	return out, evs
}

// protectedFixture is a Go module of n generated files plus the protected
// test the verify check reads.
func protectedFixture(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	generateCheckout(t, dir, n)
	if n == 0 {
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "pkg", "deep"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg", "deep", "zz_test.go"), []byte("package deep // FAIL\n"), 0o644)
	return dir
}

func violations(evs []record.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Event == record.Violation && e.Kind == "protected_file" {
			out = append(out, e.File)
		}
	}
	return out
}

func changedOf(evs []record.Event) []string {
	for _, e := range evs {
		if e.Event == record.AgentEnd {
			return e.FilesChanged
		}
	}
	return nil
}

func warned(evs []record.Event, kind string) bool {
	for _, e := range evs {
		if e.Event == record.Warning && e.Kind == kind {
			return true
		}
	}
	return false
}

func mustRestored(t *testing.T, dir string, out *Outcome, evs []record.Event) {
	t.Helper()
	if out.Reason == ReasonDone {
		t.Fatalf("the loop ended DONE after a protected edit: %s", out.Summary)
	}
	if !slices.Contains(violations(evs), "pkg/deep/zz_test.go") {
		t.Fatalf("no violation for pkg/deep/zz_test.go; violations %v, changed %v", violations(evs), changedOf(evs))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "deep", "zz_test.go")); string(b) != "package deep // FAIL\n" {
		t.Fatalf("not restored: %q", b)
	}
}

// The bug this replaced: past 50,000 files the walk stopped silently and an
// edit of a protected test ended the loop DONE.
func TestProtectedEditCaughtIn60000Files(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60,000 files")
	}
	dir := protectedFixture(t, 60000)
	out, evs := runShellAgent(t, dir, "sed -i s/FAIL/PASS/ pkg/deep/zz_test.go && echo x > pkg/p0599/new.go", "")
	mustRestored(t, dir, out, evs)
	if ch := changedOf(evs); !slices.Contains(ch, "pkg/p0599/new.go") || len(ch) > 3 {
		t.Fatalf("changed = %v, want pkg/p0599/new.go and the protected test", ch)
	}
}

// .gitignore decides what counts as the task's change, never what is
// protected.
func TestGitignoredChangeNotCountedButProtected(t *testing.T) {
	dir := protectedFixture(t, 0)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("gen/\n*.log\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "gen"), 0o755)
	os.WriteFile(filepath.Join(dir, "gen", "keep_test.go"), []byte("package gen\n"), 0o644)
	out, evs := runShellAgent(t, dir, "echo new > gen/new.txt; echo log > run.log; echo work > main.go; echo weak >> gen/keep_test.go; echo mine > gen/mine_test.go",
		"protect: [\"gen/mine_test.go\"]\n")
	ch := changedOf(evs)
	if !slices.Contains(ch, "main.go") || slices.Contains(ch, "gen/new.txt") || slices.Contains(ch, "run.log") {
		t.Fatalf("changed = %v, want main.go and neither gen/new.txt nor run.log", ch)
	}
	v := violations(evs)
	if !slices.Contains(v, "gen/keep_test.go") || !slices.Contains(v, "gen/mine_test.go") {
		t.Fatalf("violations = %v, want gen/keep_test.go (edited) and gen/mine_test.go (created), both under an ignored folder", v)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "gen", "keep_test.go")); string(b) != "package gen\n" {
		t.Fatalf("gen/keep_test.go not restored: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "gen", "mine_test.go")); err == nil {
		t.Fatal("gen/mine_test.go, created under a user glob, was left")
	}
	if out.Reason == ReasonDone {
		t.Fatal("DONE")
	}
}

// A hostile agent attacks the watch itself: it floods the kernel's event
// queue, renames folders, builds deep trees, makes folders and files in
// them faster than a watch can be added, and writes through links. Each
// time the protected edit is caught and the loop does not end DONE.
func TestWatchAttacks(t *testing.T) {
	cases := []struct {
		name, script string
		lost         bool // the engine must fall back to a walk, and say so
		either       bool // a walk or not: the events are read while the run goes on, and a loaded machine may still let the queue overflow
	}{
		{"queue overflow", `i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done; sed -i s/FAIL/PASS/ pkg/deep/zz_test.go`, true, true},
		{"folder renamed and rebuilt", `mv pkg/deep pkg/old && mkdir pkg/deep && sed s/FAIL/PASS/ pkg/old/zz_test.go > pkg/deep/zz_test.go`, false, false},
		{"parent renamed away", `mv pkg pkg2 && mkdir -p pkg/deep && echo 'package deep' > pkg/deep/zz_test.go`, false, false},
		{"deep tree", `d=.; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d && mv pkg/deep/zz_test.go $d/ && echo 'package deep' > pkg/deep/zz_test.go`, false, false},
		{"hardlink written through", `ln pkg/deep/zz_test.go link.txt && printf 'package deep // PASS\n' > link.txt`, false, false},
		{"hardlink from outside the folder", `ln pkg/deep/zz_test.go ../outside-link && printf 'package deep // PASS\n' > ../outside-link`, false, false},
		{"symlink swap", `mv pkg/deep/zz_test.go pkg/deep/.bak && printf 'package deep\n' > ../target && ln -s ../../../target pkg/deep/zz_test.go`, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.lost && testing.Short() {
				t.Skip("writes 20,000 files; the walk it falls back to is tested by TestWatchTooManyChangesWalks")
			}
			dir := protectedFixture(t, 1000)
			t.Setenv("TMPDIR", t.TempDir())
			out, evs := runShellAgent(t, dir, c.script, "")
			mustRestored(t, dir, out, evs)
			if got := warned(evs, "change_watch"); got != c.lost && !c.either {
				t.Fatalf("fell back to a walk: %v, want %v", got, c.lost)
			}
		})
	}
}

// A hard link made in one run and written through in the next, from
// outside the loop folder where no folder watch sees it: the file's own
// watch does, and a file with other links is compared by stat every time.
func TestHardlinkWrittenInALaterRun(t *testing.T) {
	dir := protectedFixture(t, 100)
	out, evs := runShellAgent(t, dir, `if [ -f ../l ]; then printf 'package deep // PASS\n' > ../l; else ln pkg/deep/zz_test.go ../l; fi`,
		"budget: {iterations: 3}\n")
	mustRestored(t, dir, out, evs)
}

// A folder of protected files renamed away in one run is put back, and its
// files stay protected in the next run.
func TestRenamedFolderStaysProtected(t *testing.T) {
	dir := protectedFixture(t, 100)
	script := `n=$(cat ../n 2>/dev/null || echo 0); n=$((n+1)); echo $n > ../n
case $n in
1) mv pkg pkg2 && mkdir -p pkg/deep && echo 'package deep' > pkg/deep/zz_test.go ;;
*) sed -i s/FAIL/PASS/ pkg/deep/zz_test.go ;;
esac`
	out, evs := runShellAgent(t, dir, script, "budget: {iterations: 3}\n")
	mustRestored(t, dir, out, evs)
	n := 0
	for _, v := range violations(evs) {
		if v == "pkg/deep/zz_test.go" {
			n++
		}
	}
	if n < 3 {
		t.Fatalf("%d violations for pkg/deep/zz_test.go, want one a run (3)", n)
	}
}
