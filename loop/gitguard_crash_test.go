package loop

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
)

// gitCrashAdapter is a hostile agent under Landlock that plants a git hook
// (which would run unconfined at the user's next commit); as its run
// starts it takes what a crash at that moment leaves: the engine's private
// folder.
type gitCrashAdapter struct {
	dir  string
	disk map[string][]byte
}

func (a *gitCrashAdapter) Name() string { return "gitcrashprobe" }

func (a *gitCrashAdapter) Invocation(req agent.Request) (agent.Invocation, error) {
	a.disk = map[string][]byte{}
	filepath.WalkDir(string(loopdir.PrivateOf(a.dir)), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			a.disk[p], _ = os.ReadFile(p)
		}
		return nil
	})
	return agent.Invocation{Path: "/bin/sh", Args: []string{"-c", "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"}, Env: []string{}}, nil
}

func (a *gitCrashAdapter) NewParser(req agent.Request) agent.Parser { return crashParser{} }

// SIGKILL in the middle of a Landlock run, simulated: the engine's private
// folder is put back as it was when the agent started (the snapshot of
// .git's control files saved in it), the hook the agent planted is left in
// .git, and the loop starts again. The restart puts .git back before
// anything else and records the hook as a violation.
func TestCrashDuringALandlockRunPutsGitBack(t *testing.T) {
	if k, err := sandbox.Resolve("landlock"); err != nil || k != sandbox.Landlock {
		t.Skipf("Landlock cannot run here: %v", err)
	}
	needGit(t)
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	ad := &gitCrashAdapter{dir: dir}
	agent.Register("gitcrashprobe", func() agent.Adapter { return ad })
	l := onePlanLoop(t, dir, "budget: {iterations: 1}\n", "gitcrashprobe")
	l.Sandbox = "landlock"
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("working-records/\n"), 0o644)
	gitInit(t, dir)
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	if _, err := Run(context.Background(), l, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Fatal("the run's end left the planted hook in place")
	}
	if _, ok := ad.disk[loopdir.Private(string(loopdir.PrivateOf(dir))).GitGuard()]; !ok {
		t.Fatalf("no snapshot of .git's control files on disk while the agent ran")
	}
	// The crash: the engine's private folder as the agent started, the
	// hook in place.
	os.RemoveAll(string(loopdir.PrivateOf(dir)))
	for p, data := range ad.disk {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, data, 0o600)
	}
	os.WriteFile(hook, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)

	var put bool
	sub := func(e record.Event) {
		if e.Event == record.Violation && e.File == ".git/hooks/pre-commit" {
			put = true
		}
	}
	if _, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){sub}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Fatal("the restart left the hook a crashed run planted")
	}
	if !put {
		t.Error("no violation names .git/hooks/pre-commit")
	}
	if _, err := os.Stat(loopdir.Private(string(loopdir.PrivateOf(dir))).GitGuard()); err == nil {
		t.Error("the snapshot stayed on disk after it was put back")
	}
}
