package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
)

func init() { register(newWaitCmd) }

func newWaitCmd(io *IO) *cobra.Command {
	var file string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait [NAME]",
		Short: "Wait until a background loop stops; exit with its exit code",
		Long: `Wait until no run holds the loop, print its status line, and exit with the
exit code its run ended with (0 DONE, 1 BUDGET SPENT, 2 NO PROGRESS, …).
A crashed run exits 1 with a message.`,
		Example: `  looprinter start && looprinter wait`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			unsure := 0
			for {
				if f, err := ops.Load(e.Key); err == nil {
					e = f
				}
				s := ops.Inspect(e)
				switch s.State {
				case ops.StateFinished, ops.StateInterrupted:
					if e.LauncherPID != 0 && ops.Alive(e.LauncherPID) {
						break // the run still lands or archives its work
					}
					fmt.Fprintf(io.Out, "%s  %s\n", s.Name, s.Line)
					if *s.ExitCode != 0 {
						return &ExitError{Code: *s.ExitCode}
					}
					return nil
				case ops.StateCrashed, ops.StateGone, ops.StateNotStarted:
					// A worktree run moves its files to the archive when it
					// ends: look again before calling it lost.
					if unsure++; unsure < 20 {
						break
					}
					fmt.Fprintf(io.Out, "%s  %s\n", s.Name, s.Line)
					return &ExitError{Code: 1, Err: fmt.Errorf("%s is %s", s.Name, s.State)}
				default:
					unsure = 0
				}
				if timeout > 0 && time.Now().After(deadline) {
					return &ExitError{Code: 1, Err: fmt.Errorf("%s is still %s after %s", s.Name, s.State, timeout)}
				}
				select {
				case <-cmd.Context().Done():
					return &ExitError{Code: ExitInterrupted}
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	return cmd
}
