// Command looprinter is a loop engine for headless coding agents.
package main

import (
	"os"

	"github.com/looprinter/looprinter/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
