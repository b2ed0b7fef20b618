package loop

import (
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/tells"
)

// treeOf is the loop folder as a run's change leaves it: the files of
// upper (a copy-on-write layer's upper folder; "" none) over the folder's,
// a whiteout (a character device) hiding the folder's file.
func (r *runner) treeOf(upper string) judge.Tree {
	read := func(rel string) ([]byte, bool) {
		if upper != "" {
			p := filepath.Join(upper, filepath.FromSlash(rel))
			if fi, err := os.Lstat(p); err == nil {
				if !fi.Mode().IsRegular() {
					return nil, false
				}
				return readChange(p)
			}
		}
		return readChange(filepath.Join(r.dir, filepath.FromSlash(rel)))
	}
	list := func(dir string) (files, dirs []string) {
		seen := map[string]bool{}
		for _, root := range []string{upper, r.dir} {
			if root == "" {
				continue
			}
			ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
			for _, e := range ents {
				n := e.Name()
				if seen[n] {
					continue
				}
				seen[n] = true
				switch {
				case e.Type()&os.ModeCharDevice != 0:
					// a whiteout: the name is gone
				case e.IsDir():
					dirs = append(dirs, n)
				case e.Type().IsRegular():
					files = append(files, n)
				}
			}
		}
		return files, dirs
	}
	return judge.Tree{Read: read, List: list}
}

// newTellsIn is what a file the run wrote tells that its version before
// did not, with its package around it: the refused tells as one note ("":
// none); the tells refused only in a library the checks import are, in
// any other file, noted for the audit instead.
func (r *runner) newTellsIn(emit func(record.Event), scope *judge.TellScope, rel string, before func() []byte, cur []byte) string {
	ts := judge.NewTellsAround(rel, before, cur, tells.Around{Siblings: scope.Siblings(rel)})
	if len(ts) == 0 {
		return ""
	}
	refused, noted := scope.Split(rel, cur, ts)
	if len(noted) > 0 {
		r.noteTells(emit, rel, noted)
	}
	return judge.TellNote(refused)
}

// noteTells reports tells that do not refuse the change (a read of the
// run's context outside a library the checks import) to the audit and
// the records (written with emit; the state's list taken under its save
// lock: attempts of a best-of are judged at once).
func (r *runner) noteTells(emit func(record.Event), rel string, ts []tells.Tell) {
	note := judge.TellNote(ts)
	r.locked(func() {
		r.st.Tells = append(r.st.Tells, rel+": "+note+" (applied: not in a library the checks import)")
		if n := len(r.st.Tells); n > 50 {
			r.st.Tells = r.st.Tells[n-50:]
		}
	})
	emit(record.Event{Event: record.Warning, Kind: "tells_noted", File: rel,
		Message: rel + ": the change reads the run's context (" + note + "); it was applied, since the checks do not import it as a library, and the audit is told"})
}
