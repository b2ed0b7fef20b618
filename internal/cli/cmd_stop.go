package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/notify"
	"github.com/looprinter/looprinter/internal/ops"
)

func init() { register(newStopCmd) }

func newStopCmd(io *IO) *cobra.Command {
	var file string
	var now bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stop [NAME] [--now]",
		Short: "Stop a running loop cleanly (or at once with --now)",
		Long: `Stop a loop's run the way Ctrl-C would: the engine stops its agent's whole
process group, writes state.json and a final loop_stop record (reason
interrupted) and exits. stop waits for that (--timeout), then kills what is
left. A later run or start resumes where it stopped.

--now kills the run, its agents and every process they started at once with
SIGKILL (never the program that started the run, nor others in its process
group), then writes the final record and state on its behalf. A scheduler
running the loop is stopped too.`,
		Example: `  looprinter stop fix-tests
  looprinter stop --now fix-tests`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				if now && len(args) > 0 && file == "" && Remote != nil {
					fmt.Fprintln(io.Err, "(a fleet loop stops after the step under way; --now does not apply to it)")
				}
				return remoteControl(cmd.Context(), io, args, file, err, "stop")
			}
			return runStop(io, e, now, timeout)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	cmd.Flags().BoolVar(&now, "now", false, "kill the run and its agents at once (SIGKILL)")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for a clean stop before killing")
	return cmd
}

func runStop(io *IO, e ops.Entry, now bool, timeout time.Duration) error {
	res, e, err := ops.StopEntry(e, now, timeout)
	if res.Scheduler != 0 {
		fmt.Fprintf(io.Err, "stopped the scheduler of %s (pid %d)\n", e.Name, res.Scheduler)
	}
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	if !res.Clean && len(res.Killed) > 0 {
		notify.Killed(e, runDir(e))
	}
	switch {
	case res.PID == 0 && len(res.Killed) == 0:
		fmt.Fprintf(io.Err, "%s is not running\n", e.Name)
	case res.PID == 0:
		fmt.Fprintf(io.Err, "%s had crashed; killed %d leftover process(es) of its run\n", e.Name, len(res.Killed))
	case res.Clean:
		fmt.Fprintf(io.Err, "stopped %s (pid %d): it wrote its final record\n", e.Name, res.PID)
	default:
		fmt.Fprintf(io.Err, "killed %s (pid %d) and %d process(es) of its run; final record written\n", e.Name, res.PID, len(res.Killed))
	}
	fmt.Fprintf(io.Out, "%s  %s\n", e.Name, ops.Inspect(e).Line)
	return nil
}
