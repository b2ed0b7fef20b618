package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// evLine is one record line of exactly size bytes, newline included, for
// task.
func evLine(t *testing.T, task string, size int) string {
	t.Helper()
	s := fmt.Sprintf(`{"event":"agent_start","task":%q,"message":""}`, task)
	pad := size - len(s) - 1
	if pad < 0 {
		t.Fatalf("a line for task %s cannot be %d bytes", task, size)
	}
	return s[:len(s)-2] + strings.Repeat("x", pad) + "\"}\n"
}

// tailWant is what tailAt must return, read the plain way: the kept
// events of the complete lines (up to the last newline), the last n of
// them (n <= 0: all), and the offset after the last newline.
func tailWant(data []byte, n int, keep func(Event) bool) ([]string, int64) {
	end := bytes.LastIndexByte(data, '\n') + 1
	var tasks []string
	Scan(bytes.NewReader(data[:end]), func(e Event) {
		if keep == nil || keep(e) {
			tasks = append(tasks, e.Task)
		}
	})
	if n > 0 && len(tasks) > n {
		tasks = tasks[len(tasks)-n:]
	}
	return tasks, int64(end)
}

func tasksOf(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Task)
	}
	return out
}

// The tail reader's edges: a line that ends, or starts, exactly where a
// read starts; a record longer than two reads; a file without a trailing
// newline, with no newline at all, or only a newline; blank lines; n of
// zero (every event), one, and more than the file holds. Each gives the
// events and the offset that reading the whole file gives.
func TestTailAtEdges(t *testing.T) {
	const c = tailChunk
	lines := func(prefix string, sizes ...int) string {
		var b strings.Builder
		for i, s := range sizes {
			b.WriteString(evLine(t, fmt.Sprintf("%s%d", prefix, i), s))
		}
		return b.String()
	}
	torn := `{"event":"agent_end","task":"torn"`
	cases := map[string]string{
		"empty":                                    "",
		"only a newline":                           "\n",
		"only a torn line":                         torn,
		"a newline then a torn line":               "\n" + torn,
		"one line, no trailing newline":            strings.TrimSuffix(evLine(t, "a", 100), "\n"),
		"one line":                                 evLine(t, "a", 100),
		"lines then a torn line":                   lines("a", 100, 200, 300) + torn,
		"blank lines between":                      "\n\n" + evLine(t, "a", 100) + "\n  \n" + evLine(t, "b", 100) + "\n",
		"exactly one read":                         lines("a", 100, c-100),
		"one byte over one read":                   lines("a", 101, c-100),
		"a line starts where the last read starts": lines("a", 500, 700, c-200, 100, 100),
		"a read starts with a newline":             lines("a", 500, 701, c-200, 99, 100),
		"a read starts just after a newline":       lines("a", 500, 699, c-200, 101, 100),
		"a record longer than two reads":           lines("a", 100, 2*c+300, 100, 100),
		"a record of exactly two reads":            lines("a", 100, 2*c, 100),
		"a torn line longer than a read":           lines("a", 100, 100) + torn + strings.Repeat("x", c+10),
		"no newline, longer than two reads":        strings.Repeat("y", 2*c+5),
		"a newline first, then a long torn line":   "\n" + strings.Repeat("y", c+5),
		"many lines over many reads":               lines("a", slices.Repeat([]int{1000}, 300)...),
		"many lines, a torn end over a read":       lines("a", slices.Repeat([]int{3000}, 100)...) + torn + strings.Repeat("z", c),
	}
	even := func(e Event) bool {
		return strings.HasSuffix(e.Task, "0") || strings.HasSuffix(e.Task, "2") || strings.HasSuffix(e.Task, "4")
	}
	for name, body := range cases {
		data := []byte(body)
		for _, n := range []int{0, 1, 2, 3, 5, 50, 1000} {
			for _, keep := range []func(Event) bool{nil, even} {
				wantTasks, wantEnd := tailWant(data, n, keep)
				evs, end, err := tailAt(bytes.NewReader(data), int64(len(data)), n, keep)
				if err != nil {
					t.Fatalf("%s, n=%d: %v", name, n, err)
				}
				if got := tasksOf(evs); !slices.Equal(got, wantTasks) {
					t.Fatalf("%s, n=%d, filtered=%v: tasks %v, want %v", name, n, keep != nil, got, wantTasks)
				}
				if end != wantEnd {
					t.Fatalf("%s, n=%d: the offset after the last complete line is %d, want %d", name, n, end, wantEnd)
				}
			}
		}
	}
}

// poisonReader fails every read that starts before from: the part of the
// file the tail reader must not need.
type poisonReader struct {
	data []byte
	from int64
	eof  bool // a read that reaches the end says io.EOF, as io.ReaderAt allows
}

func (p *poisonReader) ReadAt(b []byte, off int64) (int, error) {
	if off < p.from {
		return 0, errors.New("read before the part that holds the last events")
	}
	n := copy(b, p.data[off:])
	if n < len(b) || (p.eof && off+int64(n) == int64(len(p.data))) {
		return n, io.EOF
	}
	return n, nil
}

// Tail's time does not grow with the history: when the last read holds
// the n events asked for, nothing before it is read, also when that read
// starts with a newline or exactly at a line's start. A read that reaches
// the end and says io.EOF with all its bytes is a whole read.
func TestTailReadsOnlyWhatItNeeds(t *testing.T) {
	const c = tailChunk
	small := func(prefix string, k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			b.WriteString(evLine(t, fmt.Sprintf("%s%03d", prefix, i), 100))
		}
		return b.String()
	}
	for name, body := range map[string]string{
		// The last read starts 1000 bytes into "mid".
		"a read starts inside a line": evLine(t, "old", 3*c) + evLine(t, "mid", c-4000) + small("new", 50),
		// The last read starts at "mid"'s first byte.
		"a read starts at a line": evLine(t, "old", 3*c) + evLine(t, "mid", c-5000) + small("new", 50),
		// The last read starts with "old"'s newline.
		"a read starts with a newline": evLine(t, "old", 3*c+1) + evLine(t, "mid", c-5001) + small("new", 50),
	} {
		data := []byte(body)
		for _, eof := range []bool{false, true} {
			r := &poisonReader{data: data, from: int64(len(data)) - c, eof: eof}
			evs, end, err := tailAt(r, int64(len(data)), 3, nil)
			if err != nil {
				t.Fatalf("%s (io.EOF at the end: %v): %v", name, eof, err)
			}
			wantTasks, wantEnd := tailWant(data, 3, nil)
			if got := tasksOf(evs); !slices.Equal(got, wantTasks) || end != wantEnd {
				t.Fatalf("%s: tasks %v end %d, want %v end %d", name, got, end, wantTasks, wantEnd)
			}
		}
	}
	// The reader's error is Tail's, not an empty tail.
	data := []byte(evLine(t, "a", 100))
	if _, _, err := tailAt(&poisonReader{data: data, from: 1}, int64(len(data)), 1, nil); err == nil {
		t.Fatal("a failing read was not reported")
	}
}

// Tail over files: n of zero is every event, n larger than the history
// too; a file without a trailing newline gives the offset after its last
// complete line, where a follower goes on when the line is ended.
func TestTailAllAndOffsets(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now()
	var ws []*Writer
	for r := 0; r < 2; r++ {
		w, err := Create(dir, fmt.Sprintf("r%d", r), "command", t0.Add(time.Duration(r)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for i := 0; i < 40; i++ {
		ws[i%2].Write(Event{Event: AgentStart, Task: fmt.Sprint(i), TS: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	for _, w := range ws {
		w.Close()
	}
	sizes := map[string]int64{}
	for _, w := range ws {
		fi, err := os.Stat(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		sizes[w.Path()] = fi.Size()
	}
	f, _ := os.OpenFile(ws[0].Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":1,"event":"agent_end","task":"late"`)
	f.Close()
	all, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(all, func(a, b Event) int { return a.TS.Compare(b.TS) })
	for _, n := range []int{0, -1, len(all), len(all) + 1, 1000} {
		got, offsets, err := Tail(dir, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(all) {
			t.Fatalf("n=%d: %d events, want all %d", n, len(got), len(all))
		}
		for i := range got {
			if got[i].Task != all[i].Task {
				t.Fatalf("n=%d: event %d differs", n, i)
			}
		}
		for path, size := range sizes {
			if offsets[path] != size {
				t.Fatalf("n=%d: offset of %s is %d, want %d (after its last complete line)", n, path, offsets[path], size)
			}
		}
	}
	got, offsets, _ := Tail(dir, 3, nil)
	if ts := tasksOf(got); !slices.Equal(ts, []string{"37", "38", "39"}) {
		t.Fatalf("the last 3 events are %v, want 37 38 39", ts)
	}
	fl := NewFollowerAt(dir, offsets)
	f, _ = os.OpenFile(ws[0].Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("}\n")
	f.Close()
	if evs := fl.Poll(); len(evs) != 1 || evs[0].Task != "late" {
		t.Fatalf("after the torn line was ended the follower saw %v", tasksOf(evs))
	}
}

// ScanFrom reads from an offset to the last complete line and says where
// it stopped; a torn line is left for the next call, and a file it cannot
// read is an error that keeps the offset.
func TestScanFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	a, b := evLine(t, "a", 80), evLine(t, "b", 90)
	os.WriteFile(path, []byte(a+"\n"+b+`{"event":"agent_end","task":"c"`), 0o644)
	var got []string
	off, err := ScanFrom(path, 0, func(e Event) { got = append(got, e.Task) })
	if err != nil || off != int64(len(a)+1+len(b)) || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("from 0: offset %d, err %v, tasks %v; want %d, nil, [a b]", off, err, got, len(a)+1+len(b))
	}
	got = nil
	off, err = ScanFrom(path, int64(len(a)), func(e Event) { got = append(got, e.Task) })
	if err != nil || off != int64(len(a)+1+len(b)) || !slices.Equal(got, []string{"b"}) {
		t.Fatalf("from %d: offset %d, err %v, tasks %v; want [b]", len(a), off, err, got)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("}\n")
	f.Close()
	got = nil
	end := off + int64(len(`{"event":"agent_end","task":"c"}`)+1)
	if off, err = ScanFrom(path, off, func(e Event) { got = append(got, e.Task) }); err != nil || off != end || !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after the torn line was ended: offset %d, err %v, tasks %v; want %d, [c]", off, err, got, end)
	}
	if off, err := ScanFrom(filepath.Join(t.TempDir(), "gone"), 7, func(Event) {}); err == nil || off != 7 {
		t.Fatalf("a missing file: offset %d, err %v; want 7 and an error", off, err)
	}
	if off, err := ScanFrom(t.TempDir(), 7, func(Event) {}); err == nil || off != 7 {
		t.Fatalf("a folder: offset %d, err %v; want 7 and an error", off, err)
	}
}
