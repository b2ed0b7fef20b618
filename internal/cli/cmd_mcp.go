package cli

import (
	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/mcpserver"
)

func init() { register(newMCPCmd) }

func newMCPCmd(io *IO) *cobra.Command {
	var readOnly bool
	cmd := &cobra.Command{
		Use:   "mcp [--read-only]",
		Short: "Serve the loops to an agent session over MCP (stdio)",
		Long: `Run a Model Context Protocol server on standard input and output, for an
MCP client such as Claude Code, Codex or Gemini CLI to start as a child
process. Its tools list the loops this machine knows (loop_list), show one
(loop_status), read its recent records (loop_records) and its cost
(loop_cost), and act on it as the commands of the same name do: loop_start,
loop_pause, loop_resume, loop_stop, loop_answer, loop_guide. The resource
looprinter://loops/NAME/report is a loop's report.

The server runs as you, over pipes to the client you started: it takes no
token. --read-only leaves out every tool that acts on a loop. How to add it
to each client: docs/operating.md.`,
		Example: `  claude mcp add looprinter -- looprinter mcp
  codex mcp add looprinter -- looprinter mcp --read-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpserver.Serve(cmd.Context(), mcpserver.Options{Version: Version, ReadOnly: readOnly})
		},
	}
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "only the tools that read (no start, pause, resume, stop, answer, guide)")
	return cmd
}
