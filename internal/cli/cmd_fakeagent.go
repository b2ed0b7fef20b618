package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/internal/fakeagent"
)

func init() { register(newFakeAgentCmd) }

// The scripted fake agent ships in the binary so the demo and the tests need
// no agent CLI and no API key.
func newFakeAgentCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:                "fake-agent [--script FILE]",
		Short:              "A scripted stand-in agent for tests and the demo (command backend)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A stand-in for an agent CLI ends on TERM and INT as one does
			// (its script's ignore-term aside): the entry point catches
			// them so that looprinter's own commands end cleanly, which
			// an agent's stop must not wait for.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			if code := fakeagent.Main(args, io.In, io.Out, io.Err); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}
