package loop

import (
	"time"

	"github.com/looprinter/looprinter/loopdir"
)

// summaryEvery is how often a running engine folds what it wrote into the
// history's summary: readers then fold at most this much of the records.
const summaryEvery = 30 * time.Second

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

// keepSummary brings the history's summary up to date when it was last
// brought up to date summaryEvery ago (the first time: once a run has
// gone that long), between steps.
func (e *Engine) keepSummary() {
	now := time.Now()
	if e.summarized.IsZero() {
		e.summarized = now
		return
	}
	if now.Sub(e.summarized) < summaryEvery {
		return
	}
	e.summarized = now
	loopdir.Dir(e.dir).Summary()
}
