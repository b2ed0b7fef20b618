package fleetcmd

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/looprinter/looprinter/internal/cli"
)

// Every flag's placeholder in --help is one word (a backquoted phrase in a
// usage text becomes the placeholder: `--temporal fleet dev`), across every
// command, the fleet's included (this package registers them).
func TestFlagPlaceholders(t *testing.T) {
	root := cli.NewRoot(&cli.IO{Out: io.Discard, Err: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s shows the placeholder %q", c.CommandPath(), f.Name, name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
