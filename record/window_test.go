package record

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeLines writes events as JSONL, with junk lines (torn, blank, not a
// record) among them where junk says, and an unfinished last line.
func writeLines(t *testing.T, path string, evs []Event, junk map[int]string, torn string) {
	t.Helper()
	var b strings.Builder
	for i, e := range evs {
		if j, ok := junk[i]; ok {
			b.WriteString(j + "\n")
		}
		data, _ := json.Marshal(e)
		b.Write(data)
		b.WriteByte('\n')
	}
	b.WriteString(torn)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// SeekTime finds the first record at or after a time by bisection, in
// files with junk lines and an unfinished last one; LastTime the last.
func TestSeekTimeAndLastTime(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		n := r.IntN(400)
		var evs []Event
		ts := t0
		for i := 0; i < n; i++ {
			ts = ts.Add(time.Duration(r.IntN(3)) * time.Second) // equal times too
			evs = append(evs, Event{TS: ts, Event: Warning, Message: strings.Repeat("m", r.IntN(9000))})
		}
		junk := map[int]string{}
		for k := 0; k < r.IntN(5); k++ {
			junk[r.IntN(n+1)] = []string{"", "{\"ts\":", "not json", "{}"}[r.IntN(4)]
		}
		torn := []string{"", `{"ts":"2027-01-01T00:00:00Z","event":"warn`}[r.IntN(2)]
		path := filepath.Join(dir, "f.jsonl")
		writeLines(t, path, evs, junk, torn)
		for q := 0; q < 20; q++ {
			since := t0.Add(time.Duration(r.IntN(n*2+3)-1) * time.Second)
			off, err := SeekTime(path, since)
			if err != nil {
				t.Fatal(err)
			}
			var got []Event
			if _, err := ScanFrom(path, off, func(e Event) { got = append(got, e) }); err != nil {
				t.Fatal(err)
			}
			var want []Event
			for _, e := range evs {
				if !e.TS.Before(since) {
					want = append(want, e)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("trial %d: since %v: %d records from offset %d, want %d", trial, since, len(got), off, len(want))
			}
		}
		last, err := LastTime(path)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && !last.Equal(evs[n-1].TS) || n == 0 && !last.IsZero() {
			t.Fatalf("trial %d: LastTime %v", trial, last)
		}
	}
}

// TailBefore pages backwards through files without a gap or a repeat.
func TestTailBeforePages(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var all []Event
	for f := 0; f < 4; f++ {
		var evs []Event
		for i := 0; i < 50+f*300; i++ {
			evs = append(evs, Event{Event: []string{Warning, ToolCall}[i%3/2], Message: strings.Repeat("x", i%700) + string(rune('a'+f)), Iteration: len(all) + len(evs)})
		}
		path := filepath.Join(dir, "f"+string(rune('0'+f))+".jsonl")
		writeLines(t, path, evs, map[int]string{3: "torn{"}, `{"event":"warn`)
		files = append(files, path)
		all = append(all, evs...)
	}
	keep := func(e Event) bool { return e.Event != ToolCall }
	var want []int
	for _, e := range all {
		if keep(e) {
			want = append(want, e.Iteration)
		}
	}
	end := func(file string, off int64) func(string) int64 {
		return func(f string) int64 {
			if f == file {
				return off
			}
			return -1
		}
	}
	var got []int
	cur := end("", 0)
	left := files
	for page := 0; ; page++ {
		ps, err := TailBefore(left, cur, nil, 37, keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			break
		}
		var ids []int
		for _, p := range ps {
			ids = append(ids, p.Iteration)
		}
		got = append(ids, got...)
		first := ps[0]
		for i, f := range files {
			if f == first.File {
				left = files[:i+1]
			}
		}
		cur = end(first.File, first.Off)
		if page > 1000 {
			t.Fatal("no end")
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records paged, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: %d, want %d", i, got[i], want[i])
		}
	}
}

// ScanFromKinds decodes only lines that may be of the kinds asked for, and
// an escaped name does not hide one.
func TestScanFromKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	os.WriteFile(path, []byte(`{"event":"warning","message":"rollback is a word here"}
{"event":"rollback","message":"a"}
{"event":"\u0072ollback","message":"b"}
{"event":"land","message":"c"}
{"event":"rollback","message":"torn`), 0o600)
	var got []string
	end, err := ScanFromKinds(path, 0, []string{Rollback}, func(e Event) { got = append(got, e.Message) })
	if err != nil || strings.Join(got, ",") != "a,b" {
		t.Fatalf("%v %v", got, err)
	}
	if fi, _ := os.Stat(path); end >= fi.Size() {
		t.Errorf("the torn line was passed: %d", end)
	}
}
