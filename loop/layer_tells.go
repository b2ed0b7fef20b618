package loop

import (
	"github.com/looprinter/looprinter/judge"
	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/tells"
)

// newTellsIn is what a file the run wrote tells that its version before
// did not, with its package around it: the refused tells as one note ("":
// none); the tells refused only in a library the checks import are, in
// any other file, noted for the audit instead.
func (r *runner) newTellsIn(scope *judge.TellScope, rel string, before func() []byte, cur []byte) string {
	ts := judge.NewTellsAround(rel, before, cur, tells.Around{Siblings: scope.Siblings(rel)})
	if len(ts) == 0 {
		return ""
	}
	refused, noted := scope.Split(rel, cur, ts)
	if len(noted) > 0 {
		r.noteTells(rel, noted)
	}
	return judge.TellNote(refused)
}

// noteTells reports tells that do not refuse the change (a read of the
// run's context outside a library the checks import) to the audit and
// the records.
func (r *runner) noteTells(rel string, ts []tells.Tell) {
	note := judge.TellNote(ts)
	r.st.Tells = append(r.st.Tells, rel+": "+note+" (applied: not in a library the checks import)")
	if n := len(r.st.Tells); n > 50 {
		r.st.Tells = r.st.Tells[n-50:]
	}
	r.emit(record.Event{Event: record.Warning, Kind: "tells_noted", File: rel,
		Message: rel + ": the change reads the run's context (" + note + "); it was applied, since the checks do not import it as a library, and the audit is told"})
}
