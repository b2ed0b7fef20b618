package serve

import (
	"os"
	"sort"
	"sync"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/record"
)

// maxCachedLoops bounds the record cache: the loops whose pages were drawn
// most recently keep their records; the others are read again when asked.
const maxCachedLoops = 64

// recordCache keeps each loop's records as read so far and, per record
// file, the offset after its last complete line. A loop page is drawn again
// whenever records arrive (at most once a second while a loop runs); each
// draw reads only what was appended since the last one, so its reads do not
// grow with the loop's history (see docs/design.md).
type recordCache struct {
	mu    sync.Mutex
	loops map[string]*cachedRecords // records directory → what was read
	tick  uint64
	// read counts the bytes read from record files, for tests.
	read int64
}

type cachedRecords struct {
	offsets map[string]int64       // record file → offset after its last complete line read
	files   map[string]os.FileInfo // record file → the file read (a file replaced is read again)
	evs     []record.Event         // in time order, as ops.ReadAll returns them
	used    uint64
}

var records = &recordCache{loops: map[string]*cachedRecords{}}

// readRecords returns every event of a loop's run directory, in time order,
// as ops.ReadAll does. The slice is shared: callers must not change it.
func readRecords(runDir string) []record.Event {
	l := loopdir.Dir(runDir)
	return records.getFrom(l.Records(), l.RecordFiles)
}

// get reads every record file of a records folder.
func (rc *recordCache) get(dir string) []record.Event { return rc.getFrom(dir, record.Glob(dir)) }

// getFrom reads the record files list names, of the records folder dir.
func (rc *recordCache) getFrom(dir string, list record.Lister) []record.Event {
	files, _ := list()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.tick++
	c := rc.loops[dir]
	if c == nil || !c.stillPrefix(files) {
		c = &cachedRecords{offsets: map[string]int64{}, files: map[string]os.FileInfo{}}
		rc.loops[dir] = c
		rc.evict()
	}
	c.used = rc.tick
	var fresh []record.Event
	for _, path := range files {
		off := c.offsets[path]
		if c.files[path] == nil {
			if st, err := os.Stat(path); err == nil {
				c.files[path] = st
			}
		}
		end, err := record.ScanFrom(path, off, func(e record.Event) { fresh = append(fresh, e) })
		if err != nil && end == off {
			continue // unreadable now: a later draw may read it
		}
		rc.read += end - off
		c.offsets[path] = end
	}
	if len(fresh) > 0 {
		ordered := len(c.evs) == 0 || !fresh[0].TS.Before(c.evs[len(c.evs)-1].TS)
		if ordered && sort.SliceIsSorted(fresh, func(i, j int) bool { return fresh[i].TS.Before(fresh[j].TS) }) {
			c.evs = append(c.evs, fresh...)
		} else {
			// Sorted in a new array: slices handed out before are in use.
			all := append(append(make([]record.Event, 0, len(c.evs)+len(fresh)), c.evs...), fresh...)
			sort.SliceStable(all, func(i, j int) bool { return all[i].TS.Before(all[j].TS) })
			c.evs = all
		}
	}
	return c.evs[:len(c.evs):len(c.evs)]
}

// stillPrefix says whether what was read is still what the files hold at
// their start: every file read is still listed and no shorter than its
// offset. Otherwise (a file removed, replaced or cut) everything is read
// again.
func (c *cachedRecords) stillPrefix(files []string) bool {
	listed := map[string]bool{}
	for _, f := range files {
		listed[f] = true
	}
	for path, off := range c.offsets {
		if !listed[path] {
			return false
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() < off || c.files[path] != nil && !os.SameFile(c.files[path], st) {
			return false
		}
	}
	return true
}

// evict drops the least recently drawn loops beyond maxCachedLoops.
func (rc *recordCache) evict() {
	for len(rc.loops) > maxCachedLoops {
		var oldest string
		var at uint64
		for k, c := range rc.loops {
			if oldest == "" || c.used < at {
				oldest, at = k, c.used
			}
		}
		delete(rc.loops, oldest)
	}
}
