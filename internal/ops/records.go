package ops

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// AppendRecord appends one event to an existing record file as a single
// write of one line. A torn last line (a killed writer) is ended first so
// the new line stays whole.
func AppendRecord(path string, ev record.Event) error {
	if path == "" {
		return fmt.Errorf("no record file")
	}
	if ev.V == 0 {
		ev.V = record.Version
	}
	if ev.TS.IsZero() {
		ev.TS = time.Now().UTC()
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			r.ReadAt(last, fi.Size()-1)
			r.Close()
			if last[0] != '\n' {
				b = append([]byte{'\n'}, b...)
			}
		}
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// SideRecords opens a record file of its own in a loop's working-records
// for a process that acts on the loop from outside (the scheduler, the
// supervisor): kind names it, e.g. "schedule".
func SideRecords(dir, kind string) (*record.Writer, error) {
	now := time.Now()
	run := fmt.Sprintf("%s-%s-%d", now.UTC().Format("20060102T150405"), kind, os.Getpid())
	return loopdir.Dir(dir).CreateRecords(run, kind, now)
}

// ReadAll reads every record of a loop directory in time order (a loop's
// side record files interleave with its runs' files).
func ReadAll(dir string) ([]record.Event, error) {
	return loopdir.Dir(dir).ReadRecordsInOrder()
}
