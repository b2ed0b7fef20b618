package loop

import (
	"github.com/looprinter/looprinter/confine"
	"github.com/looprinter/looprinter/sandbox"
)

// The names the engine's older tests use for what moved to confine/.

// loopLayer is confine.LoopLayer.
func loopLayer(dir string) sandbox.Layer { return confine.LoopLayer(dir) }

// readOnlyAround is confine.ReadOnlyAround.
func readOnlyAround(root string, keep ...string) []string {
	return confine.ReadOnlyAround(root, keep...)
}
