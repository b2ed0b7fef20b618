package loop

import (
	"github.com/looprinter/looprinter/loopdir"
)

// tallySpend brings the running spend tally and the history's summary in
// the private folder up to date with this run's records, so that `cost`,
// the dashboard and the digest read only what was written after them
// (spend.FromFilesCached, loopdir.Dir.Summary).
func (e *Engine) tallySpend() {
	e.rec.Sync()
	d := loopdir.Dir(e.dir)
	d.Spend()
	d.Summary()
}
