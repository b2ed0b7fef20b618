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
			// The agent leaves a file in its TMPDIR and says where that was.
			name := fmt.Sprintf("shell%d", shellBackends.Add(1))
			agent.Register(name, func() agent.Adapter {
				return &shellAdapter{script: `echo left > "$TMPDIR/left.txt" && echo "$TMPDIR" > where.txt`}
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
					left = err == nil
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
				t.Fatalf("the agent's file was not in %s during the run", tmp)
			}
			if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Fatalf("the sandbox's temporary folder %s is still there after the loop stopped (%v)", tmp, err)
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
