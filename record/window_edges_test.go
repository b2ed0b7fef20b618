package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsLine is one record line at ts of exactly size bytes, newline included.
func tsLine(t *testing.T, ts time.Time, msg string, size int) string {
	t.Helper()
	data, _ := json.Marshal(Event{TS: ts, Event: Warning, Message: msg})
	pad := size - len(data) - 1
	if pad < 0 {
		t.Fatalf("a line for %s cannot be %d bytes", msg, size)
	}
	data, _ = json.Marshal(Event{TS: ts, Event: Warning, Message: msg + strings.Repeat(" ", pad)})
	return string(data) + "\n"
}

func messages(ps []Positioned) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimSpace(p.Message))
	}
	return out
}

// TailBefore with n of zero is every kept event of every file, in time
// order (the files' order for equal times), each with its line's start.
func TestTailBeforeAll(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeLines(t, a, []Event{{TS: t0, Event: Warning, Message: "a0"}, {TS: t0.Add(2 * time.Second), Event: Warning, Message: "a2"}}, nil, `{"event":"warn`)
	writeLines(t, b, []Event{{TS: t0, Event: Warning, Message: "b0"}, {TS: t0.Add(time.Second), Event: Warning, Message: "b1"}, {TS: t0.Add(3 * time.Second), Event: Warning, Message: "b3"}}, nil, "")
	for _, n := range []int{0, -1, 5, 6} {
		ps, err := TailBefore([]string{a, b}, func(string) int64 { return -1 }, nil, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := messages(ps); !slices.Equal(got, []string{"a0", "b0", "b1", "a2", "b3"}) {
			t.Fatalf("n %d: %v", n, got)
		}
		for _, p := range ps {
			var seen string
			if _, err := ScanFromPos(p.File, p.Off, func(e Event, _ int64) bool { seen = e.Message; return false }); err != nil || seen != p.Message {
				t.Fatalf("n %d: %s at %s:%d reads %q", n, p.Message, p.File, p.Off, seen)
			}
		}
	}
}

// Once the newer file gives exactly the n events asked for, a file whose
// newest record is older than them is neither read nor its end asked.
func TestTailBeforeStopsAtExactlyN(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old, cur := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "new.jsonl")
	writeLines(t, old, []Event{{TS: t0, Event: Warning, Message: "o0"}, {TS: t0.Add(time.Second), Event: Warning, Message: "o1"}}, nil, "")
	writeLines(t, cur, []Event{{TS: t0.Add(time.Hour), Event: Warning, Message: "n0"}, {TS: t0.Add(time.Hour + time.Second), Event: Warning, Message: "n1"}}, nil, "")
	newest := func(f string) time.Time {
		if f == old {
			return t0.Add(time.Second)
		}
		return t0.Add(time.Hour + time.Second)
	}
	for _, c := range []struct {
		n     int
		want  []string
		asked []string
	}{
		{2, []string{"n0", "n1"}, []string{cur}},
		{1, []string{"n1"}, []string{cur}},
		{3, []string{"o1", "n0", "n1"}, []string{cur, old}},
	} {
		var asked []string
		end := func(f string) int64 { asked = append(asked, f); return -1 }
		ps, err := TailBefore([]string{old, cur}, end, newest, c.n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := messages(ps); !slices.Equal(got, c.want) {
			t.Errorf("n %d: %v, want %v", c.n, got, c.want)
		}
		if !slices.Equal(asked, c.asked) {
			t.Errorf("n %d: the ends of %v asked, want %v", c.n, asked, c.asked)
		}
	}
}

// tailPos reads back from the end a chunk at a time and no further than
// the chunk that holds the n events, also when that chunk starts inside a
// line, at a line's start or with a newline; a read that reaches the end
// and says io.EOF with all its bytes is a whole read.
func TestTailPosReadsOnlyWhatItNeeds(t *testing.T) {
	const c = 4 << 10
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	small := func(k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			b.WriteString(tsLine(t, t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("new%d", i), 100))
		}
		return b.String()
	}
	old := func(size int) string { return tsLine(t, t0.Add(-time.Hour), "old", size) }
	mid := func(size int) string { return tsLine(t, t0.Add(-time.Minute), "mid", size) }
	for name, body := range map[string]string{
		"a read starts inside a line":  old(3*c) + mid(c-1000) + small(20),
		"a read starts at a line":      old(3*c) + mid(c-2000) + small(20),
		"a read starts with a newline": old(3*c+1) + mid(c-2001) + small(20),
	} {
		data := []byte(body)
		for _, eof := range []bool{false, true} {
			r := &poisonReader{data: data, from: int64(len(data)) - c, eof: eof}
			ps, err := tailPos(r, int64(len(data)), 3, nil, c)
			if err != nil {
				t.Fatalf("%s (io.EOF at the end: %v): %v", name, eof, err)
			}
			if got := messages(ps); !slices.Equal(got, []string{"new17", "new18", "new19"}) {
				t.Fatalf("%s: %v", name, got)
			}
			if want := int64(len(data) - 100); ps[2].Off != want {
				t.Fatalf("%s: the last line at %d, want %d", name, ps[2].Off, want)
			}
		}
	}
}

// LastTime reads one probe when the last record and the newline before it
// fit in it, also when that newline is the probe's first byte.
func TestLastTimeReadsOneProbe(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, last := range []int{100, probe - 1} {
		var b strings.Builder
		for i := 0; i < 50; i++ {
			b.WriteString(tsLine(t, t0.Add(time.Duration(i)*time.Second), "x", 300))
		}
		b.WriteString(tsLine(t, t0.Add(time.Hour), "last", last))
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		before := BytesRead.Load()
		got, err := LastTime(path)
		if read := BytesRead.Load() - before; err != nil || !got.Equal(t0.Add(time.Hour)) || read != probe {
			t.Errorf("last line of %d bytes: %v %v, %d bytes read, want %d", last, got, err, read, probe)
		}
	}
}

// SeekTime bisects: in a file of 4 MB it finds the first record at or
// after a time reading a few kilobytes a step, never the file up to it.
func TestSeekTimeReadsLittle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	var starts []int64
	const lines = 40000
	for i := 0; i < lines; i++ {
		starts = append(starts, int64(b.Len()))
		b.WriteString(tsLine(t, t0.Add(time.Duration(i)*time.Second), fmt.Sprint(i), 100+i%7))
	}
	size := int64(b.Len())
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 7, lines / 3, lines / 2, lines/2 + 1, lines * 9 / 10, lines - 2, lines - 1, lines} {
		want := size
		if i < lines {
			want = starts[i]
		}
		before := BytesRead.Load()
		off, err := SeekTime(path, t0.Add(time.Duration(i)*time.Second))
		read := BytesRead.Load() - before
		if err != nil || off != want {
			t.Fatalf("record %d: offset %d %v, want %d", i, off, err, want)
		}
		if read > 64<<10 {
			t.Errorf("record %d: %d bytes read", i, read)
		}
	}
}
