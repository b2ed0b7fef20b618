package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
)

func init() { register(newApproveCmd) }

func newApproveCmd(io *IO) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "approve [NAME]",
		Short: "Approve the first plan a loop waits on (plan.approve)",
		Long: `Give the OK to a loop's first plan. With plan.approve in its loop file, a
loop holds after its first plan (state waiting, "waiting for plan
approval" in status) until you approve it here, on the dashboard, through
the HTTP API or the MCP server, or until plan.approve's timeout passes.
Read the plan first: output/plan.json in the loop folder, or
looprinter status NAME.`,
		Example: `  looprinter approve fix-tests`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := resolveLoop(args, file)
			if err != nil {
				return remoteUnsupported(cmd.Context(), args, file, err, cmd.Name())
			}
			if err := ops.Approve(e, "looprinter approve"); err != nil {
				if errors.Is(err, ops.ErrNotWaitingApproval) {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				return err
			}
			fmt.Fprintf(io.Err, "approved the plan of %s; its build runs start\n", e.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the loop file")
	return cmd
}
