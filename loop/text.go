// Short forms of text the engine's records and messages use.

package loop

import (
	"fmt"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/textcut"
)

// plural is "1 build run", "2 build runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func truncate(s string, n int) string { return textcut.Cut(s, n) }

// tamperNote tells the agent of the changes refused in its run
// (guard.Note); rel names a path as the records do (loopdir.Rel);
// firstLines are the last lines of an agent's final message
// (textcut.LastLines).
var (
	tamperNote = guard.Note
	rel        = loopdir.Rel
	firstLines = textcut.LastLines
)
