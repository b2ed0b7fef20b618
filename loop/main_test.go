package loop

import (
	"os"
	"testing"

	"github.com/looprinter/looprinter/internal/fakeagent"
	"github.com/looprinter/looprinter/internal/testenv"
)

// TestMain keeps this package's tests off the user's own looprinter state
// (registry, logs, engine folders): see internal/testenv. Started as
// `TESTBINARY fake-agent --script FILE`, the test binary is the scripted
// agent of the engine tests (see fakeLoop).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "fake-agent" {
		os.Exit(fakeagent.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(testenv.Main(m))
}
