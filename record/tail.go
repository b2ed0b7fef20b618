package record

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sort"
	"time"
)

// tailChunk is how much of a file Tail reads at a time, from its end.
const tailChunk = 64 << 10

// Tail returns the last n events of a records directory that keep accepts
// (nil: every event), in time order, reading each record file from its end
// only as far as it must: its time does not grow with the loop's history.
// It also returns, for each file, the offset after its last complete line,
// where a Follower can go on (NewFollowerAt).
func Tail(dir string, n int, keep func(Event) bool) ([]Event, map[string]int64, error) {
	return TailOf(Glob(dir), n, keep)
}

// TailOf is Tail over the files list names. Files are read newest
// (by modification time) first, and no further than they must: once n
// events are in hand, a file last written before the oldest of them holds
// none of the last n and is not read (only where its last line ends, for
// the offsets).
func TailOf(list Lister, n int, keep func(Event) bool) ([]Event, map[string]int64, error) {
	return TailOfNewest(list, nil, n, keep)
}

// TailOfNewest is TailOf where newest says when each file's newest record
// was written (nil, or a zero time: the file's modification time), for
// files whose modification times say nothing (a copied folder).
func TailOfNewest(list Lister, newest func(string) time.Time, n int, keep func(Event) bool) ([]Event, map[string]int64, error) {
	files, err := list()
	if err != nil {
		return nil, nil, err
	}
	offsets := map[string]int64{}
	var all []Event
	for _, fm := range byNewest(files, newest) {
		if n > 0 && len(all) >= n && fm.mt.Add(time.Second).Before(nthNewest(all, n)) {
			if end, err := lastLineEnd(fm.path); err == nil {
				offsets[fm.path] = end
			}
			continue
		}
		evs, end, err := tailFile(fm.path, n, keep)
		if err != nil {
			continue // unreadable now: as ReadDir, a later poll may read it
		}
		offsets[fm.path] = end
		all = append(all, evs...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].TS.Before(all[j].TS) })
	if n > 0 {
		all = all[max(0, len(all)-n):]
	}
	return all, offsets, nil
}

type fileMod struct {
	path string
	idx  int
	mt   time.Time
}

// byModTime is files, last written first (files that cannot be read are
// left out).
func byModTime(files []string) []fileMod {
	out := make([]fileMod, 0, len(files))
	for i, f := range files {
		if fi, err := os.Stat(f); err == nil {
			out = append(out, fileMod{f, i, fi.ModTime()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mt.After(out[j].mt) })
	return out
}

// nthNewest is the time of the n-th newest event of evs (len(evs) >= n).
func nthNewest(evs []Event, n int) time.Time {
	ts := make([]time.Time, len(evs))
	for i, e := range evs {
		ts[i] = e.TS
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].After(ts[j]) })
	return ts[n-1]
}

// lastLineEnd is the offset after a file's last complete line.
func lastLineEnd(path string) (int64, error) {
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
	buf := make([]byte, 4<<10)
	for pos := fi.Size(); pos > 0; {
		step := min(int64(len(buf)), pos)
		pos -= step
		if _, err := r.ReadAt(buf[:step], pos); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:step], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// tailFile reads up to n kept events from the end of one file, and the
// offset after its last complete line (a line still being written is left).
func tailFile(path string, n int, keep func(Event) bool) ([]Event, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	return tailAt(countingReaderAt{f}, fi.Size(), n, keep)
}

// tailAt is tailFile on the first size bytes of r. It reads tailChunk
// bytes at a time from the end, and no further back than it must to find
// n kept events (n <= 0: all of them).
func tailAt(r io.ReaderAt, size int64, n int, keep func(Event) bool) ([]Event, int64, error) {
	var out []Event // newest first
	end, err := backLines(r, size, tailChunk, func(line []byte, _ int64) bool {
		if n > 0 && len(out) >= n {
			return false
		}
		var e Event
		if json.Unmarshal(line, &e) == nil && e.Event != "" && (keep == nil || keep(e)) {
			out = append(out, e)
		}
		return n <= 0 || len(out) < n
	})
	if err != nil {
		return nil, 0, err
	}
	slices.Reverse(out)
	return out, end, nil
}

// NewFollowerAt follows dir from the given offsets (from Tail): files not
// named are read from their start.
func NewFollowerAt(dir string, offsets map[string]int64) *Follower {
	return FollowAt(Glob(dir), offsets)
}

// FollowAt follows the files list names from the given offsets (from
// TailOf): files not named are read from their start.
func FollowAt(list Lister, offsets map[string]int64) *Follower {
	fl := &Follower{list: list, offsets: map[string]int64{}}
	for k, v := range offsets {
		fl.offsets[k] = v
	}
	return fl
}

// ScanFrom calls fn for each well-formed event of a file from offset on, up
// to its last complete line, and returns the offset after that line.
func ScanFrom(path string, offset int64, fn func(Event)) (int64, error) {
	return ScanFromPos(path, offset, func(e Event, _ int64) bool { fn(e); return true })
}
