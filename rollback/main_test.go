package rollback

import (
	"os"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

// TestMain keeps the tests' engine folders in a state folder of their own.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
