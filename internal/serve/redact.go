package serve

import (
	"os"
	"sync"
	"time"

	"github.com/looprinter/looprinter/loop"
	"github.com/looprinter/looprinter/redact"
	"github.com/looprinter/looprinter/spec"
)

// redactors is serve's default redaction: for an answer about a loop, what
// that loop redacts (loop.Redactor: the secret-named variables of serve's
// environment and of the loop's agents, redact.names and redact.patterns,
// the credential shapes; under `redact: off`, serve's own); for an answer about
// every loop, serve's environment and the credential shapes. The engine
// redacts what it writes already; this also covers records written before
// redaction existed, and files agents and checks wrote.
type redactors struct {
	base *redact.Redactor

	mu     sync.Mutex
	byFile map[string]loopRedactor
}

type loopRedactor struct {
	mod  time.Time
	size int64
	r    *redact.Redactor
}

func newRedactors() *redactors {
	return &redactors{base: redact.New(os.Environ(), nil, nil), byFile: map[string]loopRedactor{}}
}

// Bytes redacts b for the loop whose loop file is file ("" for every loop).
func (rs *redactors) Bytes(file string, b []byte) []byte {
	return rs.of(file).Bytes(b)
}

func (rs *redactors) of(file string) *redact.Redactor {
	if file == "" {
		return rs.base
	}
	fi, err := os.Stat(file)
	if err != nil {
		return rs.base
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if c, ok := rs.byFile[file]; ok && c.mod.Equal(fi.ModTime()) && c.size == fi.Size() {
		return c.r
	}
	l, err := spec.Load(file)
	if err != nil {
		return rs.base // a loop file that does not load: serve's own redaction
	}
	r := loop.Redactor(l)
	if r == nil {
		// redact: off is about what the engine writes; what is shown is
		// still redacted, as everything looprinter prints is.
		r = rs.base
	}
	rs.byFile[file] = loopRedactor{fi.ModTime(), fi.Size(), r}
	return r
}
