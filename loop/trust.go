package loop

import (
	"path/filepath"

	"github.com/looprinter/looprinter/guard"
)

// The trust boundary. An agent run may be hostile: everything it can write
// is forged until the engine has judged it. The engine therefore keeps its
// verdict's inputs where no agent can write (its private folder), runs every
// agent confined (sandbox), ends every process a run started before it looks
// at the files, and judges a run that died with the engine exactly like a
// live one (confinement.go, dead_run.go; docs/design.md explains the whole
// of it). Here: what an edit of a protected file may keep.

// keepEdit decides about an edited protected file that may keep a change:
// the loop file (judged field by field) and test-runner configuration that
// also holds other settings (an edit outside the test section stays).
func (r *runner) keepEdit(rel string, old, cur []byte) (bool, string) {
	if filepath.Join(r.dir, filepath.FromSlash(rel)) == r.spec().Path {
		return r.keepLoopFileEdit(rel, old, cur)
	}
	return guard.KeepTestConfigEdit(rel, old, cur)
}
