package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/loopdir"
)

func init() { register(newDemoCmd) }

const demoLoop = `# A throw-away loop that shows the whole two-gate cycle with a built-in
# scripted agent: no agent CLI and no API key needed.
version: 1
name: demo
shape: cycle
objective: "hello.txt says hello and world.txt says world"
agent:
  backend: command
  command: %q
  timeout: 1m
  idle_timeout: 30s
budget:
  iterations: 10
  cycles: 4
  wall: 5m
verify:
  - grep -q hello hello.txt
  - grep -q world world.txt
objective_verify:
  - sh objective.sh
post_phases:
  - name: docs
    prompt: "Write SUMMARY.md describing what the loop built."
    done: DOCS_DONE
    max_steps: 2
`

// The scripted agent plans only hello.txt in cycle 1, so the cycle gate
// fails on world.txt; the re-plan fixes it in cycle 2.
const demoScript = `== plan
say I plan one file first.
plan T-001:hello.txt
== build
do hello
== build
do world
== replan
say The gate says world.txt is missing: planning it.
plan T-001:world.txt
== docs
write SUMMARY.md The demo loop wrote hello.txt and world.txt.
promise DOCS_DONE
`

const demoObjective = `#!/bin/sh
# The key objective, judged by a machine.
test "$(cat hello.txt)" = hello && test "$(cat world.txt)" = world
`

func newDemoCmd(io *IO) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR]",
		Short: "Run a whole cycle with a built-in scripted agent (no CLI, no API key)",
		Long: `Set up a throw-away project with a loop file and a scripted agent, and run
it: plan → build → cycle gate fails → archive → re-plan with the errors →
build → both gates pass → a post phase → DONE. Takes a second or two.`,
		Example: `  looprinter demo
  looprinter demo --dir /tmp/looprinter-demo   # keep the files to look at`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "looprinter-demo-")
				if err != nil {
					return err
				}
				dir = d
			}
			if err := writeDemo(dir); err != nil {
				return err
			}
			forgetOldDemos(filepath.Join(dir, "loop.yaml"))
			fmt.Fprintf(io.Err, "demo project in %s\n\n", dir)
			o := &runOptions{file: filepath.Join(dir, "loop.yaml")}
			err := runRun(cmd, io, o)
			fmt.Fprintf(io.Out, "\nLook around: %s (loop.yaml, output/, working-records/)\n", dir)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "where to put the demo project (default: a new temporary directory)")
	return cmd
}

func writeDemo(dir string) error {
	if _, err := os.Stat(loopdir.Dir(dir).State()); err == nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s already holds a loop; pass an empty --dir", dir)}
	}
	files := map[string]string{
		// By name, not by this binary's path (go run's is deleted on exit):
		// found on PATH, or this very program (see the command backend).
		"loop.yaml":      fmt.Sprintf(demoLoop, "looprinter fake-agent --script demo-agent.txt"),
		"demo-agent.txt": demoScript,
		"objective.sh":   demoObjective,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// forgetOldDemos drops earlier demos from the registry of loops, so that
// after several demos `looprinter status demo` names the latest one. Only
// entries named demo whose folder holds the demo's agent script (or is gone)
// are forgotten; their files stay.
func forgetOldDemos(loopFile string) {
	abs, err := filepath.Abs(loopFile)
	if err != nil {
		return
	}
	entries, _ := ops.Entries()
	for _, e := range entries {
		if e.Name != "demo" || e.LoopFile == abs {
			continue
		}
		_, err := os.Stat(filepath.Join(e.Dir, "demo-agent.txt"))
		if _, derr := os.Stat(e.Dir); err == nil || os.IsNotExist(derr) {
			ops.Forget(e.Key)
		}
	}
}
