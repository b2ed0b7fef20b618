package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/spec"
)

// Fleet holds the fleet commands when they are built in (package
// internal/fleetcmd sets them: `go install -tags fleet ./cmd/looprinter`, and
// looprinter-fleet-dev). Without them the Temporal SDK stays out of the
// binary, and each command only says how to get it.
var Fleet struct {
	Worker, Submit, Group func(*IO) *cobra.Command
}

func init() {
	register(func(io *IO) *cobra.Command {
		return fleetOr(Fleet.Worker, io, "worker", "Run fleet loops' steps on this machine (a Temporal worker)")
	})
	register(func(io *IO) *cobra.Command {
		return fleetOr(Fleet.Submit, io, "submit", "Start a loop on the fleet (a Temporal workflow)")
	})
	register(func(io *IO) *cobra.Command {
		return fleetOr(Fleet.Group, io, "fleet", "Status and control of loops on the fleet (Temporal)")
	})
}

func fleetOr(real func(*IO) *cobra.Command, io *IO, use, short string) *cobra.Command {
	if real != nil {
		return real(io)
	}
	return &cobra.Command{
		Use: use, Short: short + " [not in this build]", Args: cobra.ArbitraryArgs, DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return &ExitError{Code: ExitUsage, Err: fmt.Errorf("this looprinter is built without the fleet (the Temporal SDK about doubles the binary); build it with: go install -tags fleet ./cmd/looprinter (docs/fleet.md)")}
		},
	}
}

// LoadLoop loads and validates a loop file (default ./loop.yaml) as every
// command does: an invalid one is an ExitError with code 78.
func LoadLoop(file string) (*spec.Loop, error) { return loadLoop(file) }

// RunHooks are the hooks every run of a loop gets (git commits,
// notifications): fleet workers give them to each step.
func RunHooks(l *spec.Loop) []loop.Hook { return runHooks(l) }
