package record

import (
	"bufio"
	"bytes"
	"io"
)

// MaxLine is the longest record line the readers take: a longer one (no
// record the engine writes is near it; a file grown by something else
// may hold one) is skipped like a torn line, so that no read keeps more
// than about MaxLine bytes of a file in memory, whatever its size.
const MaxLine = 16 << 20

// lineCap is MaxLine (the tests make it smaller).
var lineCap int64 = MaxLine

// firstRead is the size of a backward read's first step: most tails need
// a few lines. Each step then reads four times more, up to its chunk.
const firstRead = 8 << 10

// backLines calls fn with each complete line (its newline included) of
// the first size bytes of r, from the last one back, with where it
// starts, until fn returns false or the start is reached; it returns the
// offset after the last complete line (0 when there is none). It reads
// chunk bytes at a time at most (a small first read, growing), keeps at
// most MaxLine bytes of a line whose start it has not reached, and skips a
// line longer than that.
func backLines(r io.ReaderAt, size, chunk int64, fn func(line []byte, at int64) bool) (int64, error) {
	chunk = max(chunk, 1)
	var (
		rest  [][]byte // the end of a line whose start is not read yet, in pieces, the last one first
		held  int64    // their length
		torn  bool     // the bytes after pos end a line longer than lineCap
		found bool     // end is known: a newline was read
		end   int64
		pos   = size
		grow  = min(int64(firstRead), chunk)
	)
	carry := func(piece []byte) {
		rest, held = append(rest, append([]byte(nil), piece...)), held+int64(len(piece))
		if held > lineCap+1 {
			rest, held, torn = nil, 0, true // too long: skipped
		}
	}
	var read []byte // one buffer for every read: what is kept is copied
	for pos > 0 {
		step := min(grow, pos)
		grow = min(grow*4, chunk)
		pos -= step
		if int64(cap(read)) < step {
			read = make([]byte, step)
		}
		buf := read[:step]
		if k, err := r.ReadAt(buf, pos); err != nil && !(err == io.EOF && int64(k) == step) {
			return 0, err
		}
		if torn || !found {
			// What follows the last newline is a line still being
			// written (not found yet) or the rest of one too long.
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				continue
			}
			if !found {
				end, found = pos+int64(i)+1, true
			}
			torn = false
			buf = buf[:i+1]
		}
		if len(rest) > 0 {
			// The line the pieces end starts after buf's last newline.
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 && pos > 0 {
				carry(buf)
				continue
			}
			if start := i + 1; int64(len(buf)-start)+held <= lineCap+1 {
				line := make([]byte, 0, int64(len(buf)-start)+held)
				line = append(line, buf[start:]...)
				for k := len(rest) - 1; k >= 0; k-- {
					line = append(line, rest[k]...)
				}
				if !fn(line, pos+int64(start)) {
					return end, nil
				}
			}
			rest, held = nil, 0
			buf = buf[:i+1]
		}
		// buf ends where a line ends. Every line of it but the first is
		// whole; the first is whole only at the file's start.
		first := 0
		if pos > 0 {
			first = bytes.IndexByte(buf, '\n') + 1
		}
		body := buf[first:]
		for e := len(body); e > 0; {
			s := bytes.LastIndexByte(body[:e-1], '\n') + 1
			if int64(e-s) <= lineCap+1 && !fn(body[s:e], pos+int64(first+s)) {
				return end, nil
			}
			e = s
		}
		if first > 0 {
			carry(buf[:first])
		}
	}
	return end, nil
}

// readLine reads one line of br with its newline: a line longer than
// MaxLine is read to its end but not returned (nil, with its length), and
// a line without a newline (the end of the file) gives io.EOF and is not
// consumed as a whole line.
func readLine(br *bufio.Reader) ([]byte, int64, error) {
	var line []byte
	var n int64
	for {
		part, err := br.ReadSlice('\n')
		n += int64(len(part))
		if n <= lineCap+1 {
			line = append(line, part...)
		} else {
			line = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return line, n, err
		}
		if n > lineCap+1 {
			return nil, n, nil
		}
		return line, n, nil
	}
}
