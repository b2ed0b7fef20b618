// Command looprinter-sandbox is looprinter's layer helper as a small
// binary of its own: looprinter starts it, where it lies beside the
// looprinter binary (go install ./cmd/... puts both in one folder) and
// holds the same helper code, to lay an agent's or a check's
// copy-on-write layers and start bubblewrap (package sandbox/nshelper,
// whose init function does the work). Without it looprinter starts
// itself as the helper, which costs a few milliseconds of CPU more per
// agent run. It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	_ "github.com/looprinter/looprinter/sandbox/nshelper"
)

func main() {
	fmt.Fprintln(os.Stderr, "looprinter-sandbox: looprinter's sandbox helper; looprinter starts it, with what to do in its environment (nothing to do here)")
	os.Exit(2)
}
