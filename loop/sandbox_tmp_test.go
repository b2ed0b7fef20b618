package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/agent"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/spec"
)

// The sandbox's private temporary folder is the agent's TMPDIR during a
// run, and goes when the loop's engine stops: loops that ran once leave
// nothing in the machine's temporary folder. Run under both sandboxes.
func TestSandboxTempFolderGoesWithTheLoop(t *testing.T) {
	for _, kind := range []string{sandbox.Bwrap, sandbox.Landlock} {
		t.Run(kind, func(t *testing.T) {
			if _, err := sandbox.Resolve(kind); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("CI must have the %s sandbox: %v", kind, err)
				}
				t.Skipf("no %s here: %v", kind, err)
			}
			t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
			dir := t.TempDir()
			// Outside the loop, what the removal must never reach.
			victims := t.TempDir()
			os.WriteFile(filepath.Join(victims, "keep.txt"), []byte("keep"), 0o644)
			os.MkdirAll(filepath.Join(victims, "sub"), 0o755)
			os.WriteFile(filepath.Join(victims, "sub", "keep.txt"), []byte("keep"), 0o644)
			// The agent leaves a file in its TMPDIR and says where that was;
			// a hostile one also leaves links there to files and a folder
			// outside, hoping the engine's removal follows them.
			name := fmt.Sprintf("shell%d", shellBackends.Add(1))
			agent.Register(name, func() agent.Adapter {
				return &shellAdapter{script: `echo left > "$TMPDIR/left.txt" && echo "$TMPDIR" > where.txt && ` +
					`ln -s ` + victims + `/keep.txt "$TMPDIR/file-link" && mkdir "$TMPDIR/d" && ln -s ` + victims + `/sub "$TMPDIR/d/dir-link"`}
			})
			src := "shape: ralph\nobjective: where.txt exists\nagent: {backend: command, command: x}\nsandbox: " + kind +
				"\nbudget: {iterations: 1}\nverify: [\"test -s where.txt\"]\n"
			os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(src), 0o644)
			l, err := spec.Parse([]byte(src), filepath.Join(dir, "loop.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			l.Agent.Backend = name
			var left bool
			tmp := sandbox.TempDir(canonicalDir(t, dir))
			sub := func(e record.Event) {
				if e.Event == record.AgentEnd {
					_, err := os.Stat(filepath.Join(tmp, "left.txt"))
					_, lerr := os.Lstat(filepath.Join(tmp, "file-link"))
					_, derr := os.Lstat(filepath.Join(tmp, "d", "dir-link"))
					left = err == nil && lerr == nil && derr == nil
				}
			}
			out, err := Run(context.Background(), l, Options{Subscribers: []func(record.Event){sub}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != ReasonDone {
				t.Fatalf("outcome %s: %s", out.Reason, out.Summary)
			}
			if !left {
				t.Fatalf("the agent's file and links were not in %s during the run", tmp)
			}
			if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Fatalf("the sandbox's temporary folder %s is still there after the loop stopped (%v)", tmp, err)
			}
			for _, f := range []string{"keep.txt", "sub/keep.txt"} {
				if b, err := os.ReadFile(filepath.Join(victims, f)); err != nil || string(b) != "keep" {
					t.Fatalf("%s outside the loop, linked from the agent's TMPDIR, was touched by the removal: %q, %v", f, b, err)
				}
			}
		})
	}
}

func canonicalDir(t *testing.T, dir string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
