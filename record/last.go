package record

import (
	"encoding/json"
	"os"
	"strings"
)

// These read only a record file's tail: a loop's status costs the same at
// any length of history.

// StopOf returns the loop_stop event of a record file, if the run that
// wrote the file ended with one. Only the file's tail is read.
func StopOf(path string) (Event, bool) {
	var ev Event
	text := tailOf(path, 64<<10)
	i := strings.LastIndex(text, `"event":"`+LoopStop+`"`)
	if i < 0 || strings.LastIndex(text, `"event":"`+LoopStart+`"`) > i {
		return ev, false
	}
	start := strings.LastIndex(text[:i], "\n") + 1
	end := strings.Index(text[i:], "\n")
	if end < 0 {
		end = len(text) - i
	}
	if err := json.Unmarshal([]byte(text[start:i+end]), &ev); err != nil || ev.Event != LoopStop {
		return ev, false
	}
	return ev, true
}

// tailOf returns up to the last n bytes of a file ("" when unreadable).
func tailOf(path string, n int64) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	buf := make([]byte, n)
	k, _ := f.ReadAt(buf, max(fi.Size()-n, 0))
	return string(buf[:k])
}

// LastOf returns which of names occurs last in a record file, reading
// only its tail.
func LastOf(path string, names ...string) string {
	text := tailOf(path, 64<<10)
	best, at := "", -1
	for _, name := range names {
		if i := strings.LastIndex(text, `"event":"`+name+`"`); i > at {
			best, at = name, i
		}
	}
	return best
}
