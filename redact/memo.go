package redact

import "sync"

// memo remembers what strings redacted to, for a redactor that sees the
// same strings again and again (the engine's state, saved several times a
// step, where most strings have not changed since the last save).
type memo struct {
	mu    sync.Mutex
	m     map[string]string
	bytes int
}

// Bounds of a memo: strings longer than memoMaxString are never kept, and
// the memo starts over when it holds more than memoMaxBytes.
const (
	memoMaxString = 16 << 10
	memoMaxBytes  = 256 << 10
)

// Memo returns a redactor that redacts as r does and remembers its results
// for String (and so for Value). Build it once r is complete: values added
// to r later are not seen by it.
func (r *Redactor) Memo() *Redactor {
	if r == nil {
		return nil
	}
	c := *r
	c.memo = &memo{m: map[string]string{}}
	return &c
}

func (m *memo) get(s string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[s]
	return v, ok
}

func (m *memo) put(s, v string) {
	if len(s) > memoMaxString {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+len(s)+len(v) > memoMaxBytes {
		clear(m.m)
		m.bytes = 0
	}
	m.m[s] = v
	m.bytes += len(s) + len(v)
}
