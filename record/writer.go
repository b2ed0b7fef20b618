// The writer of a record file: one JSON line an event, redacted, stamped
// and appended in a single write.

package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/looprinter/looprinter/redact"
)

// Writer appends events to one record file. Each event is a single write of
// one complete line, so a crash can tear at most the last line.
type Writer struct {
	red  *redact.Redactor // every string of an event is redacted before it is written
	mu   sync.Mutex
	f    *os.File
	path string
	run  string
	now  func() time.Time
	subs []func(Event)
}

// FileName is the record file name for a run started at t with a backend.
func FileName(t time.Time, backend string) string {
	return fmt.Sprintf("%s-loop-%s.jsonl", t.UTC().Format("20060102T150405.000000000Z"), backend)
}

// Create opens a new record file in dir for one run invocation. A loop's
// records are created through package loopdir, which also names the file
// in the engine's private index.
func Create(dir, run, backend string, start time.Time) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	os.Chmod(dir, 0o700)
	path := filepath.Join(dir, FileName(start, backend))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create record file: %w", err)
	}
	return &Writer{f: f, path: path, run: run, now: time.Now, red: redact.New(os.Environ(), nil, nil)}, nil
}

// SetRedactor sets what is redacted from every event (subscribers see the
// redacted event too). A new Writer redacts the secrets of the process's
// environment and the built-in credential shapes; nil redacts nothing.
func (w *Writer) SetRedactor(r *redact.Redactor) {
	w.mu.Lock()
	w.red = r
	w.mu.Unlock()
}

// Path is the record file's path.
func (w *Writer) Path() string { return w.path }

// Subscribe registers fn to see every event written (the console, notifiers).
func (w *Writer) Subscribe(fn func(Event)) { w.subs = append(w.subs, fn) }

// Write stamps and appends one event.
func (w *Writer) Write(e Event) error {
	e.V = Version
	if e.TS.IsZero() {
		e.TS = w.now().UTC()
	}
	e.Run = w.run
	w.mu.Lock()
	red := w.red
	w.mu.Unlock()
	e = redact.Value(red, e)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.mu.Lock()
	_, err = w.f.Write(b)
	subs := w.subs
	w.mu.Unlock()
	for _, fn := range subs {
		fn(e)
	}
	return err
}

// Sync flushes what was written to disk: the engine calls it once per step,
// so records survive a power loss with at most one step lost. Writes go on
// while it waits for the disk (they are in the file before the next Sync).
func (w *Writer) Sync() error {
	w.mu.Lock()
	f := w.f
	w.mu.Unlock()
	return f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f.Sync()
	return w.f.Close()
}
