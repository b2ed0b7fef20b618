package statefile

import (
	"os"
	"testing"

	"github.com/looprinter/looprinter/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
