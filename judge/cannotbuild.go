package judge

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/spec"
)

// CannotBuild says why a check that failed at the baseline with output and
// exit, in the loop folder dir, cannot build its tests whatever the agent
// does: the Go or Rust compiler reported an error that only a change to
// its own file can fix (checkcmd.LocalCompileErrors: the file does not
// parse, or declares what it never uses) in a file the agent may not
// change (a protected test file). "" when no such error was reported, or
// each is in a file the agent may change (the work may be to fix it).
func CannotBuild(command, output string, exit int, dir string, l *spec.Loop) string {
	errs := checkcmd.LocalCompileErrors(output, exit)
	if len(errs) == 0 || l == nil {
		return ""
	}
	var rules *guard.ProtectRules
	for _, ce := range errs {
		rel, ok := compiledFile(dir, ce.File)
		if !ok {
			continue
		}
		if rules == nil {
			var err error
			if rules, err = guard.NewProtectRules(dir, l); err != nil {
				return "" // the guard's own listing fails the loop later, with its reason
			}
		}
		p, protected := rules.Rule(rel)
		if !protected {
			continue
		}
		return fmt.Sprintf("the check `%s` cannot build its tests (exit %d): %s:%d:%d: %s, in %s, a file the agent may not change (%s); fix it before the loop, or if the loop's work is to fix it, %s",
			command, exit, rel, ce.Line, ce.Col, ce.Msg, rel, p.Rule, p.Allow())
	}
	return ""
}

// compiledFile is a file a compiler named, relative to the loop folder dir
// (slash-separated), when it is a regular file inside it.
func compiledFile(dir, file string) (string, bool) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(file))
	}
	rel, ok := guard.RelInside(dir, p)
	if !ok {
		return "", false
	}
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return rel, true
}
