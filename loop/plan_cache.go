package loop

import "time"

// planCache is the last plan.json the engine parsed, with the stat it had.
type planCache struct {
	ino, size   uint64
	mtime, ctim int64
	plan        *Plan
	errs        []string
}

// racyWindow: a file changed this close to the moment it was read may have
// changed again within the file system clock's tick, unseen by its stat; it
// is not cached (git's "racily clean" rule).
const racyWindow = int64(100 * time.Millisecond)
