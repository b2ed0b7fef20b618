package loopdir

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// Paging back by cursor through files whose records interleave in time
// (a run's file and a side file beside it) gives every record once, in
// time order; RecordsSince gives the window and reads less than the whole.
func TestRecordsBeforePagesAndSince(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	d := Dir(t.TempDir())
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(3, 4))
	var ws []*record.Writer
	for i := 0; i < 4; i++ {
		w, err := d.CreateRecords(fmt.Sprint("r", i), "command", t0.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		w.SetRedactor(nil)
		ws = append(ws, w)
	}
	var want []int
	ts := t0
	for k := 0; k < 3000; k++ {
		if r.IntN(3) > 0 {
			ts = ts.Add(time.Duration(r.IntN(4)) * time.Second) // equal times too
		}
		// Each file's records stay in time order.
		ws[r.IntN(len(ws))].Write(record.Event{TS: ts, Event: record.Warning, Iteration: k})
		want = append(want, k)
	}
	for _, w := range ws {
		w.Close()
	}
	all, err := d.ReadRecordsInOrder()
	if err != nil || len(all) != len(want) {
		t.Fatalf("%d records, %v", len(all), err)
	}
	var got []record.Event
	c := Cursor{}
	sum, err := d.Summary()
	if err != nil {
		t.Fatal(err)
	}
	for pages := 0; ; pages++ {
		ps, err := d.RecordsBefore(c, sum, 97, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		var page []record.Event
		for _, p := range ps {
			page = append(page, p.Event)
		}
		got = append(page, got...)
		c = At(ps[0])
		if pages > 100 {
			t.Fatal("no end")
		}
	}
	if len(got) != len(all) {
		t.Fatalf("%d records paged, want %d", len(got), len(all))
	}
	seen := map[int]bool{}
	for i, e := range got {
		if seen[e.Iteration] || i > 0 && e.TS.Before(got[i-1].TS) {
			t.Fatalf("record %d (%d) repeated or out of time order", i, e.Iteration)
		}
		seen[e.Iteration] = true
	}

	since := all[len(all)-200].TS
	var window int
	before := record.BytesRead.Load()
	d.RecordsSince(since, nil, func(e record.Event) { window++ })
	read := record.BytesRead.Load() - before
	wantN := 0
	for _, e := range all {
		if !e.TS.Before(since) {
			wantN++
		}
	}
	if window != wantN {
		t.Errorf("RecordsSince gave %d records, want %d", window, wantN)
	}
	var size int64
	files, _ := d.RecordFiles()
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	t.Logf("RecordsSince read %d of %d bytes for the last %d of %d records", read, size, window, len(all))
	if read > size/2 {
		t.Errorf("RecordsSince read %d of %d bytes for the last %d of %d records", read, size, window, len(all))
	}
}
