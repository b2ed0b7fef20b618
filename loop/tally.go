package loop

import (
	"path/filepath"

	"github.com/looprinter/looprinter/internal/spend"
)

// tallySpend brings the running spend tally in the private folder up to
// date with this run's records, so that `cost` reads only what was written
// after it (internal/spend.FromDirCached).
func (e *Engine) tallySpend() {
	e.rec.Sync()
	spend.FromDirCached(e.path(RecordsDir), filepath.Join(e.priv, "spend.json"))
}
