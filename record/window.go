package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sort"
	"sync/atomic"
	"time"
)

// BytesRead counts the bytes this package read from record files: the
// tests of the readers that must not grow with a loop's history (pages,
// digests) count what a read cost through it.
var BytesRead atomic.Int64

// countingReader counts what it reads into BytesRead.
type countingReader struct{ r io.Reader }

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	BytesRead.Add(int64(n))
	return n, err
}

// countingReaderAt counts what it reads into BytesRead.
type countingReaderAt struct{ r io.ReaderAt }

func (c countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	BytesRead.Add(int64(n))
	return n, err
}

// Positioned is an event with where its line starts: the record file and
// the offset in it.
type Positioned struct {
	Event
	File string
	Off  int64
	idx  int // the file's place in its list
}

// ScanFromPos is ScanFrom that also gives each event's line start, and
// stops when fn returns false (the offset returned is then the start of
// the line fn refused).
func ScanFromPos(path string, offset int64, fn func(e Event, at int64) bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	br, err := readerFrom(f, offset)
	if br == nil {
		return offset, err
	}
	for {
		line, k, err := readLine(br)
		if err != nil {
			if err == io.EOF {
				return offset, nil // an incomplete line is left for later
			}
			return offset, err
		}
		var e Event
		if line != nil && json.Unmarshal(line, &e) == nil && e.Event != "" {
			if !fn(e, offset) {
				return offset, nil
			}
		}
		offset += k
	}
}

// TailBefore is the last n events that keep accepts (nil: all) of the
// files (oldest first, as a Lister gives them), in time order, each file
// read up to the offset end gives it (a negative one: the whole file; 0:
// none of it), with where each line starts. As TailOf, files are read
// newest first and no further than they must: newest says when a file's
// newest record was written (nil or a zero time: its modification time),
// and end is asked only of the files read. Events of the same time come
// in the files' order.
func TailBefore(files []string, end func(file string) int64, newest func(file string) time.Time, n int, keep func(Event) bool) ([]Positioned, error) {
	var all []Positioned
	for _, fm := range byNewest(files, newest) {
		if n > 0 && len(all) >= n && fm.mt.Add(time.Second).Before(nthNewestPos(all, n)) {
			continue
		}
		size := end(fm.path)
		if size == 0 {
			continue
		}
		f, err := os.Open(fm.path)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err != nil {
			size = 0
		} else if size < 0 || size > fi.Size() {
			size = fi.Size()
		}
		evs, err := tailPos(countingReaderAt{f}, size, n, keep, tailChunk)
		f.Close()
		if err != nil {
			return nil, err
		}
		for k := range evs {
			evs[k].File, evs[k].idx = fm.path, fm.idx
		}
		all = append(all, evs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].before(all[j]) })
	if n > 0 {
		all = all[max(0, len(all)-n):]
	}
	return all, nil
}

// byNewest is files, the one with the newest record first: newest says
// when (nil or zero: the file's modification time).
func byNewest(files []string, newest func(string) time.Time) []fileMod {
	out := byModTime(files)
	if newest == nil {
		return out
	}
	for i := range out {
		if t := newest(out[i].path); !t.IsZero() {
			out[i].mt = t
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mt.After(out[j].mt) })
	return out
}

// before orders positioned events by time, then by file and offset.
func (p Positioned) before(q Positioned) bool {
	if !p.TS.Equal(q.TS) {
		return p.TS.Before(q.TS)
	}
	if p.idx != q.idx {
		return p.idx < q.idx
	}
	return p.Off < q.Off
}

func nthNewestPos(evs []Positioned, n int) time.Time {
	ts := make([]time.Time, len(evs))
	for i, e := range evs {
		ts[i] = e.TS
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].After(ts[j]) })
	return ts[n-1]
}

// tailPos is tailAt with each event's line start, for lines that end
// (with a newline) within the first size bytes of r, reading chunk bytes
// at a time at most.
func tailPos(r io.ReaderAt, size int64, n int, keep func(Event) bool, chunk int64) ([]Positioned, error) {
	var out []Positioned // newest first
	_, err := backLines(r, size, chunk, func(line []byte, at int64) bool {
		if n > 0 && len(out) >= n {
			return false
		}
		var e Event
		if json.Unmarshal(line, &e) == nil && e.Event != "" && (keep == nil || keep(e)) {
			out = append(out, Positioned{Event: e, Off: at})
		}
		return n <= 0 || len(out) < n
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// probe is how much of a file SeekTime reads at a time.
const probe = 4 << 10

// LastTime is the time of the last well-formed record of a file (its end
// read backwards, no further than that record), zero when it has none.
func LastTime(path string) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	evs, err := tailPos(countingReaderAt{f}, fi.Size(), 1, nil, probe)
	if err != nil || len(evs) == 0 {
		return time.Time{}, err
	}
	return evs[0].TS, nil
}

// SeekTime is the offset of the first complete line of a record file whose
// record is at or after since, or the offset after the last complete line
// when none is: records are written in time order, so it is found by
// bisection, reading a few kilobytes per step. A line that does not parse
// counts as the first one after it that does.
func SeekTime(path string, since time.Time) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	r := countingReaderAt{f}
	size := fi.Size()
	// at(pos) is the first line starting at or after pos (pos 0: the
	// file's start) whose record parses: its start and whether it is at or
	// after since (a file's end counts as after).
	at := func(pos int64) (int64, bool, error) {
		start := pos
		if pos > 0 {
			// The line containing pos-1 ends at the next newline.
			nl, err := findByte(r, pos-1, size)
			if err != nil || nl < 0 {
				return size, true, err
			}
			start = nl + 1
		}
		for start < size {
			nl, err := findByte(r, start, size)
			if err != nil {
				return size, true, err
			}
			if nl < 0 {
				return size, true, nil // an unfinished line: the end
			}
			if nl-start > lineCap {
				start = nl + 1 // too long: skipped, as by every reader
				continue
			}
			line := make([]byte, nl-start)
			if _, err := r.ReadAt(line, start); err != nil && err != io.EOF {
				return size, true, err
			}
			var e Event
			if json.Unmarshal(line, &e) == nil && e.Event != "" {
				return start, !e.TS.Before(since), nil
			}
			start = nl + 1
		}
		return size, true, nil
	}
	lo, hi := int64(0), size // the answer's line starts at some pos in [lo, hi]
	for hi-lo > linear {
		mid := lo + (hi-lo)/2
		_, ok, err := at(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// The rest line by line, from the first line that starts at lo or after.
	start := lo
	if lo > 0 {
		nl, err := findByte(r, lo-1, size)
		if err != nil {
			return 0, err
		}
		if nl < 0 {
			return size, nil
		}
		start = nl + 1
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, size-start), 8<<10)
	for {
		line, k, err := readLine(br)
		if err != nil {
			return start, nil // the end, or an unfinished line: nothing at or after since
		}
		var e Event
		if line != nil && json.Unmarshal(line, &e) == nil && e.Event != "" && !e.TS.Before(since) {
			return start, nil
		}
		start += k
	}
}

// linear is how close SeekTime's bisection comes before it reads line by
// line.
const linear = 16 << 10

// findByte is the offset of the first newline at or after from, or -1.
func findByte(r io.ReaderAt, from, size int64) (int64, error) {
	buf := make([]byte, 1<<10)
	for read := 0; from < size; read++ {
		if read == 4 {
			buf = make([]byte, 64<<10) // a long line: larger reads
		}
		n := min(int64(len(buf)), size-from)
		k, err := r.ReadAt(buf[:n], from)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return from + int64(i), nil
		}
		if err != nil && err != io.EOF {
			return -1, err
		}
		if k == 0 {
			return -1, nil
		}
		from += int64(k)
	}
	return -1, nil
}

// readBuffer is the buffer of a read from an offset.
const readBuffer = 32 << 10

// readerFrom reads f from offset (nil when nothing is left: a fold of many
// files that did not grow allocates nothing).
func readerFrom(f *os.File, offset int64) (*bufio.Reader, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if offset >= fi.Size() {
		return nil, nil
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(countingReader{f}, readBuffer), nil
}

// ScanFromKinds is ScanFrom for the events of the given kinds only: a line
// that names none of them (and escapes nothing, which could hide a name)
// is not decoded.
func ScanFromKinds(path string, offset int64, kinds []string, fn func(Event)) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	br, err := readerFrom(f, offset)
	if br == nil {
		return offset, err
	}
	words := make([][]byte, len(kinds))
	for i, k := range kinds {
		words[i] = []byte(k)
	}
	escape := []byte(`\u`)
	for {
		line, k, err := readLine(br)
		if err != nil {
			if err == io.EOF {
				return offset, nil
			}
			return offset, err
		}
		offset += k
		named := bytes.Contains(line, escape)
		for _, w := range words {
			named = named || bytes.Contains(line, w)
		}
		if !named {
			continue
		}
		var e Event
		if json.Unmarshal(line, &e) == nil && e.Event != "" && slices.Contains(kinds, e.Event) {
			fn(e)
		}
	}
}
