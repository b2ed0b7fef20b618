package loopdir

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/looprinter/looprinter/record"
)

// Every reader of a loop's records through its index — the tail, a page
// before any cursor, the records up to the summary, the scan from a
// cursor, the time window — over files of which one is past 3 MB (further
// back than the tail's reads once grew without overflowing), with
// cursors at every kind of offset (a record's start, inside a line, at
// and past a file's end) and n up to past the history: none panics,
// none gives more than n, and each gives what a plain read gives.
func TestLoopReadersBounded(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	d := Dir(t.TempDir())
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(5, 6))
	var ws []*record.Writer
	for i := 0; i < 3; i++ {
		w, err := d.CreateRecords(fmt.Sprint("r", i), "command", t0.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		w.SetRedactor(nil)
		ws = append(ws, w)
	}
	ts := t0
	for k := 0; k < 14000; k++ {
		if r.IntN(3) > 0 {
			ts = ts.Add(time.Duration(r.IntN(3)) * time.Second) // equal times too
		}
		i := 0 // most go to the first file
		if r.IntN(5) == 0 {
			i = 1 + r.IntN(2)
		}
		ws[i].Write(record.Event{TS: ts, Event: record.Warning, Iteration: k, Message: strings.Repeat("x", 150+r.IntN(200))})
	}
	for _, w := range ws {
		w.Close()
	}
	files, _ := d.RecordFiles()
	// The plain read: every record with its position, in the readers'
	// order (time, then file, then offset).
	var all []record.Positioned
	sizes := map[string]int64{}
	for _, f := range files {
		fi, _ := os.Stat(f)
		sizes[f] = fi.Size()
		record.ScanFromPos(f, 0, func(e record.Event, at int64) bool {
			all = append(all, record.Positioned{Event: e, File: f, Off: at})
			return true
		})
	}
	if sizes[files[0]] < 3<<20 {
		t.Fatalf("the first file is %d bytes", sizes[files[0]])
	}
	idx := func(f string) int { return slices.Index(files, f) }
	less := func(p, q record.Positioned) bool {
		if !p.TS.Equal(q.TS) {
			return p.TS.Before(q.TS)
		}
		if p.File != q.File {
			return idx(p.File) < idx(q.File)
		}
		return p.Off < q.Off
	}
	sort.SliceStable(all, func(i, j int) bool { return less(all[i], all[j]) })
	last := func(ps []record.Positioned, n int) []record.Positioned { return ps[max(0, len(ps)-n):] }
	iters := func(ps []record.Positioned) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.Iteration)
		}
		return out
	}
	sum, err := d.Summary()
	if err != nil {
		t.Fatal(err)
	}
	ns := []int{1, 7, 300, 2000, 13999, len(all) + 10}

	// A cursor at a record: exactly the n before it.
	for k := 0; k < 12; k++ {
		at := r.IntN(len(all))
		if k == 0 {
			at = len(all) - 1
		}
		n := ns[r.IntN(len(ns))]
		got, err := d.RecordsBefore(At(all[at]), sum, n, nil)
		if want := last(all[:at], n); err != nil || !slices.Equal(iters(got), iters(want)) {
			t.Fatalf("before record %d, n %d: %d records %v, want %d", at, n, len(got), err, len(want))
		}
	}
	// Any other offset, at or past a file's end too: bounded, in order.
	for _, f := range files {
		for _, off := range []int64{0, 1, sizes[f] / 2, sizes[f] - 1, sizes[f], sizes[f] + 1, 1 << 62} {
			for _, n := range []int{5, 2000} {
				c := Cursor{TS: all[r.IntN(len(all))].TS, File: f, Off: off}
				got, err := d.RecordsBefore(c, sum, n, nil)
				if err != nil || len(got) > n || !sort.SliceIsSorted(got, func(i, j int) bool { return less(got[i], got[j]) }) {
					t.Fatalf("cursor %s:%d n %d: %d records %v", f, off, n, len(got), err)
				}
			}
		}
	}
	if _, err := d.RecordsBefore(Cursor{TS: t0, File: "/etc/passwd", Off: 5}, sum, 5, nil); err == nil {
		t.Fatal("a cursor naming another file: no error")
	}
	for _, n := range ns {
		up, err := d.RecordsUpTo(sum, n, nil)
		if want := last(all, n); err != nil || !slices.Equal(iters(up), iters(want)) {
			t.Fatalf("up to the summary, n %d: %d records %v, want %d", n, len(up), err, len(want))
		}
		tail, _, err := d.Tail(n, nil)
		if err != nil || len(tail) != min(n, len(all)) {
			t.Fatalf("tail %d: %d records %v", n, len(tail), err)
		}
		got, want := iters(positioned(tail)), iters(last(all, n))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("tail %d: not the last %d records", n, n)
		}
	}
	// The scan from a cursor: that file from there, then the files after.
	for _, f := range files {
		for _, off := range []int64{0, sizes[f], sizes[f] + 7} {
			var got int
			if err := d.ScanFrom(Cursor{File: f, Off: off}, func(record.Positioned) bool { got++; return true }); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, p := range all {
				if i := idx(p.File); i > idx(f) || i == idx(f) && p.Off >= off {
					want++
				}
			}
			if got != want {
				t.Fatalf("scan from %s:%d: %d records, want %d", f, off, got, want)
			}
		}
	}
	for _, since := range []time.Time{t0.Add(-time.Hour), all[len(all)/2].TS, all[len(all)-1].TS, all[len(all)-1].TS.Add(time.Hour)} {
		var got int
		d.RecordsSince(since, nil, func(record.Event) { got++ })
		want := 0
		for _, p := range all {
			if !p.TS.Before(since) {
				want++
			}
		}
		if got != want {
			t.Fatalf("since %v: %d records, want %d", since, got, want)
		}
	}
}

func positioned(evs []record.Event) []record.Positioned {
	out := make([]record.Positioned, len(evs))
	for i, e := range evs {
		out[i].Event = e
	}
	return out
}
