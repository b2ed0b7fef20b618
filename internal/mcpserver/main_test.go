package mcpserver

import (
	"os"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

// TestMain keeps this package's tests off the user's own looprinter state
// and cache: see internal/testenv.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
