package loopdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/spend"
	"github.com/looprinter/looprinter/summary"
)

// CreateRecords opens a new record file in the loop's records for one run
// (or one process acting on the loop from outside: kind names it) and names
// it in the engine's private index before anything is written to it: only
// indexed files are read back as the loop's records.
func (d Dir) CreateRecords(run, kind string, start time.Time) (*record.Writer, error) {
	w, err := record.Create(d.Records(), run, kind, start)
	if err != nil {
		return nil, err
	}
	if err := d.Private().addRecordFile(w.Path()); err != nil {
		w.Close()
		os.Remove(w.Path())
		return nil, fmt.Errorf("index the record file: %w", err)
	}
	return w, nil
}

// RecordFiles lists the loop's record files, oldest first: the files the
// engine's private index names. A loop never run with an index (older
// versions, another machine) falls back to every *.jsonl file.
func (d Dir) RecordFiles() ([]string, error) {
	files, err := d.Private().indexedFiles(d.Records())
	if !errors.Is(err, errNoIndex) {
		return files, err
	}
	return record.Files(d.Records())
}

// lister is RecordFiles, for the readers of package record.
func (d Dir) lister() record.Lister { return d.RecordFiles }

// ReadRecords reads every event of the loop's record files, oldest file
// first; torn lines are skipped.
func (d Dir) ReadRecords() ([]record.Event, error) { return record.ReadAll(d.lister()) }

// ReadRecordsInOrder is ReadRecords in time order (side record files, of
// the scheduler or the supervisor, interleave with the runs' files).
func (d Dir) ReadRecordsInOrder() ([]record.Event, error) {
	evs, err := d.ReadRecords()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].TS.Before(evs[j].TS) })
	return evs, err
}

// Tail is the last n events of the loop that keep accepts (nil: all), in
// time order, read from the files' ends only as far as needed; and each
// file's offset after its last complete line, for FollowAt.
// The summary in the private folder, as saved (not brought up to date),
// says when each file's newest record was written, when it can be read.
func (d Dir) Tail(n int, keep func(record.Event) bool) ([]record.Event, map[string]int64, error) {
	var newest func(string) time.Time
	if files, err := d.RecordFiles(); err == nil && len(files) > 1 {
		newest = newestOf(summary.Load(d.Private().Summary(), files))
	}
	return record.TailOfNewest(d.lister(), newest, n, keep)
}

// Spend is what the loop has spent, from its records: the tally in the
// private folder is brought up to date with what was written since it was
// saved (it is saved back when the folder can be written).
func (d Dir) Spend() (*spend.Report, error) {
	return spend.FromFilesCached(d.lister(), d.Private().Tally())
}

// SpendUncached is Spend without the tally: every record read again.
func (d Dir) SpendUncached() (*spend.Report, error) { return spend.FromFiles(d.lister()) }

// Follow follows the loop's records; fromStart replays what is there.
func (d Dir) Follow(fromStart bool) *record.Follower { return record.Follow(d.lister(), fromStart) }

// FollowAt follows the loop's records from the offsets Tail returned.
func (d Dir) FollowAt(offsets map[string]int64) *record.Follower {
	return record.FollowAt(d.lister(), offsets)
}

// Rel is p as the records name it: relative to the loop folder dir when
// it is inside, else as it is.
func Rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// UniquePath is p, or p with a number before its extension (x.2.log,
// x.3.log …) when p exists: a file of the records is never overwritten.
func UniquePath(p string) string {
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return p
	}
	ext := filepath.Ext(p)
	stem := strings.TrimSuffix(p, ext)
	for i := 2; ; i++ {
		q := fmt.Sprintf("%s.%d%s", stem, i, ext)
		if _, err := os.Stat(q); os.IsNotExist(err) {
			return q
		}
	}
}
