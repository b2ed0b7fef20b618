package cli

import (
	"fmt"
	"io"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/spec"
)

// printInlineTests says which files hold tests inside them (Rust's
// #[cfg(test)] modules, doctests a check runs) and so are protected in
// part, at most max of them (max < 0: all); nothing when none does.
func printInlineTests(w io.Writer, l *spec.Loop, indent string, max int) {
	found := judge.InlineTests(l.Dir, l)
	if len(found) == 0 {
		return
	}
	fmt.Fprintf(w, "%sinline tests: %s hold tests inside them, protected like test files (the rest of each file is the agent's):\n", indent, count(len(found), "file"))
	for i, f := range found {
		if i == max {
			fmt.Fprintf(w, "%s  … and %d more\n", indent, len(found)-max)
			break
		}
		kind := f.Kind
		if f.Count != 1 {
			kind += "s"
		}
		fmt.Fprintf(w, "%s  %s  ← %d %s\n", indent, f.Path, f.Count, kind)
	}
}
