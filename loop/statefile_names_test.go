package loop

import "github.com/looprinter/looprinter/statefile"

// The names the engine's tests knew the state's files by before they moved
// to statefile/: one line each over the room's, so the tests read as they
// did.

// journalSyncs counts the journal's syncs (statefile.Syncs).
var journalSyncs = &statefile.Syncs

// journal is a statefile.Journal; last is the slot of its last synced
// save, as it stands after each write.
type journal struct {
	*statefile.Journal
	last int
}

func openJournal(priv string) (*journal, error) {
	j, err := statefile.OpenJournal(priv)
	if err != nil {
		return nil, err
	}
	return &journal{Journal: j, last: j.Last()}, nil
}

func (j *journal) write(payload, pub []byte, durable bool) error {
	err := j.Write(payload, pub, durable)
	j.last = j.Last()
	return err
}

func (j *journal) close() { j.Close() }

// slot is a journal's slot as the tests read it.
type slot struct{ payload []byte }

func readJournal(priv string) (slot, int, bool) {
	s, i, ok := statefile.ReadJournal(priv)
	return slot{payload: s.Payload}, i, ok
}

func removeJournal(priv string) { statefile.RemoveJournal(priv) }

func writeCopy(path string, data []byte) error { return statefile.WriteCopy(path, data) }

func isNoSpace(err error) bool { return statefile.IsNoSpace(err) }
