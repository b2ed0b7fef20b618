package redact

import (
	"bytes"
	"io"
	"sync"
)

// chunk is how much a stream gathers beyond its hold-back before it
// redacts and passes text on: one scan per chunk, not per write.
const chunk = 64 << 10

// maxHeld bounds what a stream keeps back for an unfinished secret (a
// private key block whose end has not come); past it the block is
// redacted to its end whenever that comes.
const maxHeld = 256 << 10

// Writer is a stream that redacts what is written to it before it reaches
// the writer underneath.
type Writer struct {
	mu    sync.Mutex
	r     *Redactor
	w     io.Writer
	buf   []byte
	inKey bool // inside a private key block too long to hold: drop to its end
	err   error
}

// Writer returns a stream that redacts everything written to it into w. It
// keeps back only as many bytes as the longest secret value needs (at least
// 4 KiB; more for an unfinished private key block, up to 256 KiB), so a
// secret split across two writes is still caught. Flush passes on what is
// held except a secret that may still be under way; Close passes on
// everything (it does not close w). A nil Redactor's Writer passes
// everything through.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Write takes p; it is passed on, redacted, once enough follows it.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.r == nil {
		return s.w.Write(p)
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) >= s.r.Hold()+chunk {
		s.emit(len(s.buf)-s.r.Hold(), false)
	}
	return len(p), s.err
}

// Flush passes on every complete line held, except what may be the start of
// a secret still under way (the beginning of a secret value, an unfinished
// private key block). The
// engine calls it when the agent is quiet, so readers of a transcript see
// it without waiting for more output.
func (s *Writer) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil && s.err == nil {
		// Credentials are one line (a private key block is held apart):
		// an unfinished line may be the start of one.
		cut := min(bytes.LastIndexByte(s.buf, '\n')+1, len(s.buf)-s.r.partial(s.buf))
		s.emit(cut, false)
	}
	return s.err
}

// Close passes on everything held, redacted. It does not close the
// writer underneath.
func (s *Writer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil && s.err == nil {
		s.emit(len(s.buf), true)
	}
	s.buf = nil
	return s.err
}

// emit passes on buf[:cut], moved back to the start of any secret that
// crosses it, and keeps the rest. final passes on everything.
func (s *Writer) emit(cut int, final bool) {
	if s.inKey {
		loc := endKey.FindIndex(s.buf)
		if loc == nil {
			if keep := 64; len(s.buf) > keep && !final {
				s.buf = append(s.buf[:0], s.buf[len(s.buf)-keep:]...)
			}
			if final {
				s.buf = s.buf[:0]
			}
			return
		}
		cut = max(cut-loc[1], 0)
		s.buf = append(s.buf[:0], s.buf[loc[1]:]...)
		s.inKey = false
	}
	n := len(s.buf)
	if !final && cut <= 0 && n <= maxHeld {
		return // nothing may go out yet
	}
	// Where no secret starts before the cut, the text goes out as it is:
	// one scan per chunk, not two.
	first := n
	spansBefore := func(cut int) bool { return first < cut }
	if !final {
		type span struct {
			start, end int
			open       bool
		}
		var spans []span
		s.r.spans(s.buf, func(start, end int, open bool) {
			spans = append(spans, span{start, end, open})
			first = min(first, start)
		})
		openAt := -1
		for moved := true; moved; {
			moved = false
			for _, sp := range spans {
				if sp.start < cut && (sp.end > cut || sp.open) {
					cut, moved = sp.start, true
					if sp.open && sp.end == n && openKey.Match(s.buf[sp.start:min(n, sp.start+80)]) {
						openAt = sp.start
					}
				}
			}
		}
		if cut <= 0 {
			if n <= maxHeld {
				return
			}
			if openAt >= 0 {
				// A private key block too long to hold: redact it whole,
				// dropping everything until its end.
				s.write(s.r.Bytes(s.buf[:openAt]))
				s.write([]byte("[REDACTED:private_key]"))
				s.buf = s.buf[:0]
				s.inKey = true
				return
			}
			cut = n - s.r.Hold() // a secret longer than the hold-back: cut through it
		}
	}
	var out []byte
	if final || spansBefore(cut) {
		out = s.r.redact(s.buf[:cut], final)
	}
	if out == nil {
		out = s.buf[:cut]
	}
	s.write(out)
	s.buf = append(s.buf[:0], s.buf[cut:]...)
}

func (s *Writer) write(b []byte) {
	if s.err != nil || len(b) == 0 {
		return
	}
	_, s.err = s.w.Write(b)
}
