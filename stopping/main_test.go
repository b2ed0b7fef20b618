package stopping

import (
	"os"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

// TestMain keeps this package's tests off the user's own looprinter state
// (registry, logs, engine folders): see internal/testenv.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
