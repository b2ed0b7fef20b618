package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// plainLines is what every reader must see in data, read the plain way:
// each complete line (newline included) of at most lineCap+1 bytes that
// holds a record, with where it starts.
func plainLines(data []byte) []Positioned {
	var out []Positioned
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		line := data[off : off+i+1]
		var e Event
		if int64(len(line)) <= lineCap+1 && json.Unmarshal(line, &e) == nil && e.Event != "" {
			out = append(out, Positioned{Event: e, Off: int64(off)})
		}
		off += i + 1
	}
	return out
}

func lastN(ps []Positioned, n int) []Positioned {
	if n > 0 && len(ps) > n {
		return ps[len(ps)-n:]
	}
	return ps
}

func samePos(a, b []Positioned) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Off != b[i].Off || a[i].Message != b[i].Message || !a[i].TS.Equal(b[i].TS) {
			return false
		}
	}
	return true
}

// FuzzBackReaders: the readers that go back from an offset (tailAt,
// tailPos with any chunk) and forward from one (ScanFromPos) see exactly
// the records of the plain read, at any size up to and past the data's,
// any n, over any bytes, with lines past the longest kept (lineCap, made
// small here) skipped by all of them alike; none panics.
func FuzzBackReaders(f *testing.F) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec bytes.Buffer
	for i := 0; i < 40; i++ {
		b, _ := json.Marshal(Event{TS: t0.Add(time.Duration(i) * time.Second), Event: Warning, Message: strings.Repeat("m", i*7)})
		rec.Write(append(b, '\n'))
		if i%9 == 4 {
			rec.WriteString(`{"event":"torn` + "\n\n")
		}
	}
	f.Add(rec.Bytes(), int64(rec.Len()), 0, int64(7))
	f.Add(rec.Bytes(), int64(rec.Len()+100), 5, int64(1))
	f.Add(rec.Bytes(), int64(rec.Len()/2), 1000, int64(64))
	f.Add(append(bytes.Repeat([]byte{0}, 3000), rec.Bytes()...), int64(1<<40), 3, int64(16))
	f.Add(append(rec.Bytes(), bytes.Repeat([]byte("x"), 2000)...), int64(-5), -1, int64(0))
	f.Fuzz(checkBack)
}

// Random histories of every kind of line — records, torn ones, blank
// ones, zeros, lines past the longest kept — read back with random sizes,
// n and chunks: the fuzz test's property, run each time.
func TestBackReadersRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := 0; round < 300; round++ {
		var b bytes.Buffer
		for i, lines := 0, rng.Intn(60); i < lines; i++ {
			switch rng.Intn(8) {
			case 0:
				b.WriteString(`{"event":"torn` + "\n")
			case 1:
				b.WriteString("\n")
			case 2:
				b.Write(make([]byte, rng.Intn(700)))
				b.WriteString("\n")
			default:
				b.Write(mustLine(Event{TS: t0.Add(time.Duration(i) * time.Second), Event: Warning, Message: strings.Repeat("m", rng.Intn(500))}))
			}
		}
		if rng.Intn(2) == 0 {
			b.WriteString(`{"event":"warning","message":"unfinished`)
		}
		data := b.Bytes()
		size := rng.Int63n(int64(len(data)) + 50)
		if rng.Intn(4) == 0 {
			size = int64(len(data))
		}
		checkBack(t, data, size, rng.Intn(70)-5, 1+rng.Int63n(900))
	}
}

func checkBack(t *testing.T, data []byte, size int64, n int, chunk int64) {
	{
		defer func(c int64) { lineCap = c }(lineCap)
		lineCap = 300
		chunk = max(1, min(chunk, 1<<12)) // the readers' chunks, made small
		size = min(max(size, 0), int64(len(data)))
		want := plainLines(data[:size])
		got, err := tailPos(bytes.NewReader(data), size, n, nil, chunk)
		if err != nil || !samePos(got, lastN(want, n)) {
			t.Fatalf("tailPos(size %d, n %d, chunk %d) = %d records %v, want %d", size, n, chunk, len(got), err, len(lastN(want, n)))
		}
		evs, end, err := tailAt(bytes.NewReader(data), size, n, nil)
		if wantEnd := int64(bytes.LastIndexByte(data[:size], '\n') + 1); err != nil || end != wantEnd || len(evs) != len(lastN(want, n)) {
			t.Fatalf("tailAt(size %d, n %d) = %d records, end %d %v; want %d, %d", size, n, len(evs), end, err, len(lastN(want, n)), wantEnd)
		}
		path := filepath.Join(t.TempDir(), "r.jsonl")
		if err := os.WriteFile(path, data[:size], 0o600); err != nil {
			t.Fatal(err)
		}
		for _, from := range []int64{0, size / 3, size, size + 10, -1} {
			var seen []Positioned
			_, err := ScanFromPos(path, from, func(e Event, at int64) bool { seen = append(seen, Positioned{Event: e, Off: at}); return true })
			var w []Positioned
			for _, p := range want {
				if p.Off >= from {
					w = append(w, p)
				}
			}
			if from >= 0 && bytes.LastIndexByte(data[:min(from, size)], '\n')+1 != int(min(from, size)) {
				continue // from inside a line: what it reads is not a record boundary
			}
			if from < 0 {
				if err == nil && len(seen) > 0 {
					t.Fatalf("ScanFromPos from %d read %d records", from, len(seen))
				}
				continue
			}
			if err != nil || !samePos(seen, w) {
				t.Fatalf("ScanFromPos from %d = %d records %v, want %d", from, len(seen), err, len(w))
			}
		}
	}
}

// bigHistory writes a sparse record file past 1 GB: a few records at its
// start, then a record at each MiB followed by an unreadable line (zeros,
// as a hole reads) to the next, records at 512 MiB, the same again, then
// 3 MB of records and a torn last line. It returns the file, its records with their
// offsets, and the offset after its last complete line.
func bigHistory(t testing.TB) (string, []Positioned, int64) {
	t.Helper()
	const mib = 1 << 20
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []Positioned
	k := 0
	block := func(at int64, count, pad int) int64 {
		var b bytes.Buffer
		for i := 0; i < count; i++ {
			e := Event{TS: t0.Add(time.Duration(k) * time.Second), Event: AgentEnd, Message: fmt.Sprintf("r%d %s", k, strings.Repeat("p", pad))}
			data, _ := json.Marshal(e)
			all = append(all, Positioned{Event: e, Off: at + int64(b.Len())})
			b.Write(append(data, '\n'))
			k++
		}
		if _, err := f.WriteAt(b.Bytes(), at); err != nil {
			t.Fatal(err)
		}
		return at + int64(b.Len())
	}
	// junk fills from..to with a record at each MiB, each followed by an
	// unreadable line (zeros, as a hole reads) to the next.
	junk := func(from, to int64) {
		for at := (from/mib + 1) * mib; at+mib <= to; at += mib {
			f.WriteAt([]byte{'\n'}, at-1)
			block(at, 1, 0)
		}
		f.WriteAt([]byte{'\n'}, to-1)
	}
	a := block(0, 100, 20)
	junk(a, 512*mib)
	b := block(512*mib, 100, 20)
	junk(b, 1030*mib)
	c := block(1030*mib, 12000, 200) // 3 MB: further back than the reads once grew
	torn := []byte(`{"event":"agent_end","ts":"2026`)
	if _, err := f.WriteAt(torn, c); err != nil {
		t.Fatal(err)
	}
	return path, all, c
}

// Every reader of a record file is bounded and right over a history past
// 1 GB (a sparse file), at offsets and sizes up to and past the file's
// size: tails of every length (the one that reads back past 1.5 MB used
// to panic: makeslice: len out of range), the time bisection, the last
// record's time, the forward scan.
func TestReadersPastAGigabyte(t *testing.T) {
	path, all, end := bigHistory(t)
	fi, _ := os.Stat(path)
	size := fi.Size()
	if size < 1<<30 {
		t.Fatalf("the history is %d bytes", size)
	}
	rng := rand.New(rand.NewSource(1))
	upTo := func(e int64) []Positioned {
		i := 0
		for i < len(all) && all[i].Off < e {
			i++
		}
		// a record whose line ends past e is not whole before e
		for i > 0 && all[i-1].Off+int64(len(mustLine(all[i-1].Event))) > e {
			i--
		}
		return all[:i]
	}
	type probe struct {
		end int64
		n   int
	}
	probes := []probe{{-1, len(all) + 1}, {-1, 12050}, {size, 10}, {size + 1<<30, 20}, {0, 5}, {end, 12000},
		{512<<20 + 50, 3}, {700 << 20, 40}, {all[len(all)-1].Off, 7000}}
	for i := 0; i < 4; i++ {
		probes = append(probes, probe{end - rng.Int63n(3<<20), rng.Intn(3000)})
	}
	for _, p := range probes {
		got, err := TailBefore([]string{path}, func(string) int64 { return p.end }, nil, p.n, nil)
		e := p.end
		if e < 0 || e > size {
			e = size
		}
		want := lastN(upTo(e), p.n)
		if err != nil || len(got) != len(want) || (len(want) > 0 && (got[0].Off != want[0].Off || got[len(got)-1].Off != want[len(want)-1].Off)) {
			t.Fatalf("TailBefore(end %d, n %d): %d records %v, want %d", p.end, p.n, len(got), err, len(want))
		}
	}
	evs, off, err := tailFile(path, 12150, nil)
	if err != nil || off != end || len(evs) != 12150 || evs[0].Message != all[len(all)-12150].Message {
		t.Fatalf("tailFile: %d records, end %d %v; want 12150, %d", len(evs), off, err, end)
	}
	if got, err := lastLineEnd(path); err != nil || got != end {
		t.Fatalf("lastLineEnd %d %v, want %d", got, err, end)
	}
	if got, err := LastTime(path); err != nil || !got.Equal(all[len(all)-1].TS) {
		t.Fatalf("LastTime %v %v", got, err)
	}
	for _, i := range []int{0, 50, 99, 100, 150, 400, 600, 700, len(all) - 6000, len(all) - 1} {
		got, err := SeekTime(path, all[i].TS)
		if err != nil || got != all[i].Off {
			t.Fatalf("SeekTime(record %d) = %d %v, want %d", i, got, err, all[i].Off)
		}
	}
	if got, err := SeekTime(path, all[len(all)-1].TS.Add(time.Hour)); err != nil || got != end {
		t.Fatalf("SeekTime after the last record = %d %v, want %d", got, err, end)
	}
	for _, from := range []int64{all[len(all)-12100].Off, size, size + 100} {
		var n int
		next, err := ScanFromPos(path, from, func(Event, int64) bool { n++; return true })
		want := 0
		if from < size {
			want = 12100
		}
		if err != nil || n != want || (from < size && next != end) {
			t.Fatalf("ScanFromPos(%d): %d records, next %d %v", from, n, next, err)
		}
	}
	if _, err := ScanFromPos(path, -3, func(Event, int64) bool { return true }); err == nil {
		t.Fatal("ScanFromPos from a negative offset: no error")
	}
}

func mustLine(e Event) []byte {
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

// A line longer than the longest kept is skipped by every reader alike,
// back and forth, and a tail over it keeps no more than about that much
// of it in hand.
func TestOverlongLinesSkippedAlike(t *testing.T) {
	defer func(c int64) { lineCap = c }(lineCap)
	lineCap = 4 << 10
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for i := 0; i < 30; i++ {
		pad := 10
		if i%7 == 3 {
			pad = 5 << 10 // past lineCap
		}
		b.Write(mustLine(Event{TS: t0.Add(time.Duration(i) * time.Second), Event: Warning, Message: fmt.Sprint(i, strings.Repeat(" ", pad))}))
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(path, b.Bytes(), 0o600)
	want := plainLines(b.Bytes())
	if len(want) != 30-4 {
		t.Fatalf("the plain read kept %d", len(want))
	}
	back, err := TailBefore([]string{path}, func(string) int64 { return -1 }, nil, 0, nil)
	if err != nil || !samePos(back, want) {
		t.Fatalf("TailBefore: %d %v", len(back), err)
	}
	var fwd []Positioned
	ScanFromPos(path, 0, func(e Event, at int64) bool { fwd = append(fwd, Positioned{Event: e, Off: at}); return true })
	if !samePos(fwd, want) {
		t.Fatalf("ScanFromPos: %d", len(fwd))
	}
	for _, p := range want {
		if got, _ := SeekTime(path, p.TS); got != p.Off {
			t.Fatalf("SeekTime(%s) = %d, want %d", p.Message, got, p.Off)
		}
	}
	if !slices.EqualFunc(back, fwd, func(a, b Positioned) bool { return a.Off == b.Off }) {
		t.Fatal("back and forth differ")
	}
	if evs, err := ReadFile(path); err != nil || len(evs) != len(want) {
		t.Fatalf("ReadFile: %d %v, want %d", len(evs), err, len(want))
	}
	if evs := Follow(Glob(filepath.Dir(path)), true).Poll(); len(evs) != len(want) {
		t.Fatalf("the follower: %d, want %d", len(evs), len(want))
	}
}
