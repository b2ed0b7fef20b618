package loop

import (
	"errors"
	"fmt"
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

// minFree is the free space under which a folder counts as full: less than
// one step's records, state copies and check logs.
const minFree = 64 << 10

// freeSpace says how many bytes the engine (and the agents it runs, as
// the same user) can still write on the filesystem of path; ok is false
// when it cannot tell. A variable, for the tests.
var freeSpace = diskFree

// noSpace is why the loop must stop for want of disk space, or "".
func (s *store) noSpace() string {
	s.spaceMu.Lock()
	werr := s.spaceErr
	s.spaceMu.Unlock()
	if werr != nil {
		return fmt.Sprintf("no space left on device: %v; free some space, then run the loop again (it resumes where it stopped)", werr)
	}
	for _, p := range []string{s.dir, s.priv} {
		if p == "" {
			continue
		}
		if free, ok := freeSpace(p); ok && free < minFree {
			return fmt.Sprintf("no space left on device: %s has %d bytes free; free some space, then run the loop again (it resumes where it stopped)", p, free)
		}
	}
	return ""
}

// noteWriteErr keeps the first write of the engine's own that failed for
// want of space (ENOSPC, or EDQUOT: a quota is as full as a disk).
func (s *store) noteWriteErr(err error) {
	if err == nil || !isNoSpace(err) {
		return
	}
	s.spaceMu.Lock()
	if s.spaceErr == nil {
		s.spaceErr = err
	}
	s.spaceMu.Unlock()
}

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
