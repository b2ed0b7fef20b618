package loopdir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/looprinter/looprinter/record"
	"github.com/looprinter/looprinter/summary"
)

// Summary is the summary of the loop's history in the private folder.
func (p Private) Summary() string { return p.join("summary.json") }

// Summary is the loop's history summed up (package summary): the summary
// in the private folder, brought up to date with what was written since it
// was saved, and saved back when the folder can be written. One that is
// missing or does not check out is folded again from the records.
func (d Dir) Summary() (*summary.Summary, error) {
	files, err := d.RecordFiles()
	if err != nil {
		return nil, err
	}
	path := d.Private().Summary()
	s := summary.Load(path, files)
	before := s.Records
	fresh := len(s.Offsets) == 0
	if err := s.Fold(files); err != nil {
		return s, err
	}
	if s.Records != before || fresh && len(files) > 0 {
		// Best effort, and only where an engine made the private folder: a
		// read-only folder still gives the right summary.
		if fi, err := os.Stat(string(d.Private())); err == nil && fi.IsDir() {
			s.Save(path)
		}
	}
	return s, nil
}

// SummaryUncached is Summary folded from every record, nothing saved.
func (d Dir) SummaryUncached() (*summary.Summary, error) {
	files, err := d.RecordFiles()
	if err != nil {
		return nil, err
	}
	s := summary.New()
	return s, s.Fold(files)
}

// Cursor is a position in a loop's records, which are ordered by time,
// then by file (in the index's order), then by offset: a record's time,
// file and the offset where its line starts. The zero cursor is after
// every record.
type Cursor struct {
	TS   time.Time
	File string
	Off  int64
}

// At is the cursor of a record read with its position.
func At(p record.Positioned) Cursor { return Cursor{TS: p.TS, File: p.File, Off: p.Off} }

// RecordsBefore is the last n records before the cursor that keep accepts
// (nil: all), in time order, each with its position: the first one's is
// the cursor of the page before. Each file is read only as far as it
// must: from where its records reach the cursor's time (found by
// bisection), and not at all when it was last written before the n
// records in hand.
//
// sum, when not nil, is the loop's summary: it says when each file's
// newest record was written, so that files are not read in vain when
// their modification times say nothing (a copied folder).
func (d Dir) RecordsBefore(c Cursor, sum *summary.Summary, n int, keep func(record.Event) bool) ([]record.Positioned, error) {
	files, err := d.RecordFiles()
	if err != nil {
		return nil, err
	}
	newest := newestOf(sum)
	if c.File == "" {
		return record.TailBefore(files, func(string) int64 { return -1 }, newest, n, keep)
	}
	at := slices.Index(files, c.File)
	if at < 0 {
		return nil, fmt.Errorf("%s is not one of the loop's record files", filepath.Base(c.File))
	}
	return record.TailBefore(files, func(f string) int64 {
		i := slices.Index(files, f)
		var end int64
		var err error
		switch {
		case i == at:
			return c.Off
		case i < at: // the same time sorts before the cursor in an earlier file
			end, err = record.SeekTime(f, c.TS.Add(time.Nanosecond))
		default:
			end, err = record.SeekTime(f, c.TS)
		}
		if err != nil {
			return 0
		}
		return end
	}, newest, n, keep)
}

// newestOf is when each file's newest record was written, by the summary:
// for the files it folded to their end (a file written since may hold
// newer ones: its modification time says).
func newestOf(sum *summary.Summary) func(string) time.Time {
	if sum == nil {
		return nil
	}
	return func(f string) time.Time {
		if fi, err := os.Stat(f); err != nil || fi.Size() != sum.Offsets[f] {
			return time.Time{}
		}
		return sum.Newest(f)
	}
}

// RecordsUpTo is the last n records that keep accepts (nil: all) among
// those the summary s was folded from (each file up to its offset).
func (d Dir) RecordsUpTo(s *summary.Summary, n int, keep func(record.Event) bool) ([]record.Positioned, error) {
	files, err := d.RecordFiles()
	if err != nil {
		return nil, err
	}
	return record.TailBefore(files, func(f string) int64 { return s.Offsets[f] }, s.Newest, n, keep)
}

// ScanFrom calls fn with each record from the cursor on (the file c.File
// from c.Off, then the files listed after it) until fn returns false.
func (d Dir) ScanFrom(c Cursor, fn func(record.Positioned) bool) error {
	files, err := d.RecordFiles()
	if err != nil {
		return err
	}
	started := false
	for _, f := range files {
		off := int64(0)
		if !started {
			if f != c.File {
				continue
			}
			started, off = true, c.Off
		}
		stop := false
		if _, err := record.ScanFromPos(f, off, func(e record.Event, at int64) bool {
			if !fn(record.Positioned{Event: e, File: f, Off: at}) {
				stop = true
				return false
			}
			return true
		}); err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	return nil
}

// RecordsSince calls fn with each record of the given kinds (none: every
// kind) written at or after since, file by file: a file whose last record is older is not read, and within a
// file the first record of the window is found by bisection on the
// records' times (they are written in time order), so what is read is the
// window, not the history.
func (d Dir) RecordsSince(since time.Time, kinds []string, fn func(record.Event)) error {
	files, err := d.RecordFiles()
	if err != nil {
		return err
	}
	// The summary, as saved, says when the files it covers were last
	// written; the others' last records are read.
	newest := newestOf(summary.Load(d.Private().Summary(), files))
	for _, f := range files {
		last := newest(f)
		if last.IsZero() {
			if last, err = record.LastTime(f); err != nil {
				continue
			}
		}
		if last.Before(since) {
			continue
		}
		off, err := record.SeekTime(f, since)
		if err != nil {
			continue
		}
		each := func(e record.Event) {
			if !e.TS.Before(since) {
				fn(e)
			}
		}
		if len(kinds) > 0 {
			record.ScanFromKinds(f, off, kinds, each)
		} else {
			record.ScanFrom(f, off, each)
		}
	}
	return nil
}
