package loop

import (
	"github.com/looprinter/looprinter/loopdir"
)

// tallySpend brings the running spend tally in the private folder up to
// date with this run's records, so that `cost` reads only what was written
// after it (internal/spend.FromDirCached).
func (e *Engine) tallySpend() {
	e.rec.Sync()
	loopdir.Dir(e.dir).Spend()
}
