// Command looprinter-fleet-dev is looprinter with `fleet dev`: an embedded
// Temporal server and one worker, to try the fleet on one machine. It is
// built apart from looprinter (its own module, Go 1.26.10):
//
//	cd internal/fleetdev && GOTOOLCHAIN=go1.26.10+auto go install ./cmd/looprinter-fleet-dev
package main

import (
	"os"

	"github.com/looprinter/looprinter/internal/cli"
	"github.com/looprinter/looprinter/internal/fleetcmd"
	"github.com/looprinter/looprinter/internal/fleetdev"
)

func main() {
	fleetcmd.Dev = fleetdev.Command
	os.Exit(cli.Main(os.Args[1:]))
}
