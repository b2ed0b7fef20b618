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
func (s *store) tallySpend() {
	s.rec.Sync()
	d := loopdir.Dir(s.dir)
	d.Spend()
	d.Summary()
}

// keepSummary brings the history's summary up to date when it was last
// brought up to date summaryEvery ago (the first time: once a run has
// gone that long), between steps.
func (s *store) keepSummary() {
	now := time.Now()
	if s.summarized.IsZero() {
		s.summarized = now
		return
	}
	if now.Sub(s.summarized) < summaryEvery {
		return
	}
	s.summarized = now
	loopdir.Dir(s.dir).Summary()
}
