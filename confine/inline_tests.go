package confine

import (
	"path/filepath"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/judge"
)

// inlineTests is how a file the run wrote in its layer changed the inline
// test modules the folder's version holds ("" when it did not): such a
// change is refused like a tell (judge/inline_tests.go).
func (a *Applier) inlineTests(rel string, cur []byte, ok bool) string {
	if !ok {
		return ""
	}
	return a.inlineTestsOf(rel, func() []byte {
		old, err := guard.ReadBounded(filepath.Join(a.Dir, filepath.FromSlash(rel)), 4<<20)
		if err != nil {
			return nil
		}
		return old
	}, cur)
}

// inlineTestsIn is inlineTests with the file before the run read by
// before, only for a language with inline test modules.
func inlineTestsIn(rel string, before func() []byte, cur []byte) string {
	if len(cur) > 4<<20 || judge.InlineTestSpans(rel, []byte("#[cfg(test)] mod t {}")) == nil {
		return ""
	}
	return judge.InlineTestsChanged(rel, before(), cur)
}

// inlineTestsOf is inlineTestsIn where a Python file's doctests count only
// when a check runs them (judge.RunsDoctests).
func (a *Applier) inlineTestsOf(rel string, before func() []byte, cur []byte) string {
	if filepath.Ext(rel) == ".py" {
		if len(cur) > 4<<20 || !judge.RunsDoctests(a.Spec(), a.Dir) {
			return ""
		}
		return judge.InlineTestsChanged(rel, before(), cur)
	}
	return inlineTestsIn(rel, before, cur)
}
