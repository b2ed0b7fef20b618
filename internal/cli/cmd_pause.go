package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
)

func init() {
	register(newPauseCmd)
	register(newResumeCmd)
}

func newPauseCmd(io *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "pause [NAME]",
		Short: "Pause a loop before its next agent run",
		Long: `Pause a loop: the agent run in progress finishes and is judged as usual,
then the loop waits before starting the next one (a paused record), until
` + "`looprinter resume`" + `. Time spent paused does not count against budget.wall.
While it is paused, edit loop.yaml: the change takes effect at the next
agent run, recorded as spec_changed.`,
		Example: "  looprinter pause fix-tests",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				return remoteControl(cmd.Context(), io, args, file, err, "pause")
			}
			live, err := ops.Pause(e, "looprinter pause")
			if err != nil {
				return err
			}
			if live {
				fmt.Fprintf(io.Err, "%s will pause before its next agent run; `looprinter resume %s` goes on\n", e.Name, e.Name)
			} else {
				fmt.Fprintf(io.Err, "%s is not running; it will pause before its first agent run when started\n", e.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	return cmd
}

func newResumeCmd(io *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:     "resume [NAME]",
		Short:   "Resume a paused loop",
		Example: "  looprinter resume fix-tests",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				return remoteControl(cmd.Context(), io, args, file, err, "resume")
			}
			was, err := ops.Resume(e)
			if err != nil {
				return err
			}
			if !was {
				fmt.Fprintf(io.Err, "%s was not paused\n", e.Name)
				return nil
			}
			fmt.Fprintf(io.Err, "%s resumes\n", e.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	return cmd
}
