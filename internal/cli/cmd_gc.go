package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/ops"
	"github.com/looprinter/looprinter/internal/termtext"
)

func init() { register(newGCCmd) }

func newGCCmd(io *IO) *cobra.Command {
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "gc [--dry-run] [--json]",
		Short: "Free what finished loops no longer need: their agents' HOME and cache layers",
		Long: `Free the disk that finished loops no longer need: what their agents wrote
to HOME and the caches (the copy-on-write layers kept from run to run in
the engine's private folder) and a layer a dead run left behind. A loop
that is running, waiting, paused, interrupted (it can be resumed) or
crashed keeps them. The loop's records, state and history stay.

Private folders no registered loop owns are listed with their size, not
freed. --dry-run says what would be freed and frees nothing.`,
		Example: `  looprinter gc --dry-run
  looprinter gc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			items, err := ops.GC(dryRun)
			if err != nil {
				return err
			}
			if asJSON {
				if items == nil {
					items = []ops.GCItem{}
				}
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(items)
			}
			var total int64
			verb := "freed"
			if dryRun {
				verb = "would free"
			}
			for _, it := range items {
				name := it.Loop
				if name == "" {
					name = "(no loop)"
				}
				switch {
				case it.Error != "":
					fmt.Fprintf(io.Out, "%s: %s %s, then failed: %s (%s)\n", termtext.Line(name), verb, ops.Bytes(it.Bytes), it.Error, it.Folder)
				case it.Why != "":
					fmt.Fprintf(io.Out, "%s: kept %s: %s (%s)\n", termtext.Line(name), ops.Bytes(it.Bytes), it.Why, it.Folder)
				default:
					fmt.Fprintf(io.Out, "%s: %s %s (%s)\n", termtext.Line(name), verb, ops.Bytes(it.Bytes), it.Folder)
					total += it.Bytes
				}
			}
			fmt.Fprintf(io.Out, "%s %s in all\n", verb, ops.Bytes(total))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be freed, free nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
