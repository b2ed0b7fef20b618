// Short forms of text the engine's records and messages use.

package loop

import (
	"fmt"
	"strings"

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
