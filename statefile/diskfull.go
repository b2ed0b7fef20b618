package statefile

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
)

// A full disk. An agent run, a check or the engine's own writes (records,
// state, plan, layers, commits) that fail for want of space make every
// later failure look like the agent's: the loop would end NO PROGRESS on a
// misleading failure signal. So before and after each step the engine
// looks at the free space of the loop folder and of its private folder,
// and at the first write of its own that failed with ENOSPC: either stops
// the loop BLOCKED, naming the path ("no space left on device"), before
// any other outcome but DONE. The state is in the engine's journal, written
// in place (no new blocks), so nothing is lost: free some space and run
// again.

// MinFree is the free space under which a folder counts as full: less
// than one step's records, state copies and check logs.
const MinFree = 64 << 10

// Full keeps the first write of the engine's own that failed for want of
// space. Its zero value is ready; it is safe for concurrent use.
type Full struct {
	mu  sync.Mutex
	err error
}

// Note keeps err when it is the first write that failed for want of space
// (ENOSPC, or EDQUOT: a quota is as full as a disk); other errors are not
// kept.
func (f *Full) Note(err error) {
	if err == nil || !IsNoSpace(err) {
		return
	}
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// Why is why the loop must stop for want of disk space, or "": the write
// noted, else the first of paths (an empty one is skipped) that has less
// than MinFree bytes free as free measures them (Free, or a test's).
func (f *Full) Why(free func(string) (uint64, bool), paths ...string) string {
	f.mu.Lock()
	werr := f.err
	f.mu.Unlock()
	if werr != nil {
		return fmt.Sprintf("no space left on device: %v; free some space, then run the loop again (it resumes where it stopped)", werr)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if n, ok := free(p); ok && n < MinFree {
			return fmt.Sprintf("no space left on device: %s has %d bytes free; free some space, then run the loop again (it resumes where it stopped)", p, n)
		}
	}
	return ""
}

// IsNoSpace says whether err is a write that failed for want of space.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
