// Short forms of text the engine's records and messages use.

package loop

import (
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/textcut"
)

func truncate(s string, n int) string { return textcut.Cut(s, n) }

// tamperNote tells the agent of the changes refused in its run
// (guard.Note); rel names a path as the records do (loopdir.Rel);
// firstLines are the last lines of an agent's final message
// (textcut.LastLines); plural is "1 build run", "2 build runs"
// (textcut.Plural).
var (
	plural     = textcut.Plural
	tamperNote = guard.Note
	rel        = loopdir.Rel
	firstLines = textcut.LastLines
)
