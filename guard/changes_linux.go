package guard

import (
	"io/fs"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// FSClock is the clock file timestamps are taken from (the coarse one).
func FSClock() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts) != nil {
		unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	}
	return ts.Nano()
}

// changedSince walks the loop folder for the files whose ctime is at or
// past since.
func changedSince(dir string, since int64) ([]string, error) {
	var out []string
	err := walkFiles(dir, func(rel string, d fs.DirEntry) {
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ctim.Nano() >= since {
				out = append(out, rel)
			}
		}
	})
	sort.Strings(out)
	return out, err
}
