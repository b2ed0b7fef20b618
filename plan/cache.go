package plan

import "time"

// Cache keeps the last plan file Read parsed, with the stat it had, so that
// a plan read again and again (the engine reads plan.json at every step)
// is parsed again only when the file changed. The zero Cache is empty and
// ready; it is not safe for use by more than one goroutine at once.
type Cache struct {
	held        bool
	path        string
	ino, size   uint64
	mtime, ctim int64
	plan        *Plan
	errs        []string
}

// racyWindow: a file changed this close to the moment it was read may have
// changed again within the file system clock's tick, unseen by its stat; it
// is not cached (git's "racily clean" rule).
const racyWindow = int64(100 * time.Millisecond)
