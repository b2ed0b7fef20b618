package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// lastLineEnd is the offset after the last newline, whether that newline
// is in its first read from the end (at that read's first byte too) or
// further back, and 0 for a file without one.
func TestLastLineEnd(t *testing.T) {
	const r = 4 << 10 // lastLineEnd's read
	line := evLine(t, "a", 100)
	torn := func(k int) string { return `{"event":"agent_end","task":"` + strings.Repeat("t", k-29) }
	for name, body := range map[string]string{
		"empty":                                   "",
		"only a newline":                          "\n",
		"a newline then a torn line":              "\n" + torn(100),
		"a torn line only":                        torn(100),
		"a torn line longer than a read":          torn(3*r + 5),
		"one line":                                line,
		"lines, the last one complete":            strings.Repeat(line, 100),
		"lines then a torn line":                  strings.Repeat(line, 100) + torn(200),
		"the last newline is a read's first byte": strings.Repeat(line, 100) + torn(r-1),
		"the last newline is a read's last byte":  strings.Repeat(line, 100) + torn(r),
		"the last newline two reads back":         strings.Repeat(line, 100) + torn(2*r+7),
	} {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := lastLineEnd(path)
		if want := int64(bytes.LastIndexByte([]byte(body), '\n') + 1); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", name, got, err, want)
		}
	}
	if _, err := lastLineEnd(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Error("a missing file has no error")
	}
}

// Once the newer files hold exactly the n events asked for, a file last
// written before them is not read: only where its last complete line ends
// is, for the offsets (a torn line after it is left to the follower).
func TestTailOfNewestSkipsAnOlderFile(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	old, cur := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "new.jsonl")
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, `{"ts":%q,"event":"warning","message":"old %03d %s"}`+"\n", now.Add(-2*time.Hour).Format(time.RFC3339), i, strings.Repeat("o", 80))
	}
	oldEnd := int64(b.Len())
	b.WriteString(`{"event":"warning","message":"torn`)
	if err := os.WriteFile(old, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, `{"ts":%q,"event":"warning","message":"new %d"}`+"\n", now.Format(time.RFC3339), i)
	}
	if err := os.WriteFile(cur, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(cur, now, now); err != nil {
		t.Fatal(err)
	}
	before := BytesRead.Load()
	evs, offsets, err := TailOf(func() ([]string, error) { return []string{old, cur}, nil }, 3, nil)
	read := BytesRead.Load() - before
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range evs {
		msgs = append(msgs, e.Message)
	}
	if !slices.Equal(msgs, []string{"new 0", "new 1", "new 2"}) {
		t.Fatalf("events %v", msgs)
	}
	if got, ok := offsets[old]; !ok || got != oldEnd {
		t.Errorf("the older file's offset: %d (%v), want %d", got, ok, oldEnd)
	}
	if got := offsets[cur]; got != int64(b.Len()) {
		t.Errorf("the newer file's offset: %d, want %d", got, b.Len())
	}
	// The newer file whole, and one read of lastLineEnd from the older
	// file's end: not the older file's 50 KB.
	if limit := int64(b.Len() + 4<<10); read > limit {
		t.Errorf("%d bytes read, want at most %d", read, limit)
	}
}
