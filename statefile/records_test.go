package statefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// toyFields is a state of n's: "n" changes at every save, "big" never,
// "gone" is left out from the 5th save on.
func toyFields(n int) []Field {
	f := []Field{{Key: "n", Value: fmt.Appendf(nil, "%d", n)}, {Key: "big", Value: []byte(`"` + strings.Repeat("b", 3000) + `"`)}}
	if n < 5 {
		f = append(f, Field{Key: "gone", Value: []byte(`[1,2]`)})
	} else {
		f = append(f, Field{Key: "gone"})
	}
	return f
}

// state is what a payload says, as a map (the journal's order of members
// is not the state's business).
func state(t *testing.T, payload []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	return m
}

func wantState(t *testing.T, n int) map[string]any {
	return state(t, compact(toyFields(n)))
}

func readN(t *testing.T, priv string) (Slot, int) {
	t.Helper()
	s, idx, ok := ReadJournal(priv)
	if !ok {
		t.Fatal("no state read")
	}
	return s, idx
}

// Saves after the first to a file append only the members that changed
// since that file's last record; a load replays them to the newest state,
// synced or not, members left out included.
func TestDeltasReplayToTheNewestState(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	for n := 1; n <= 12; n++ {
		before := [2]int64{j.end[0], j.end[1]}
		if err := j.SaveFields(toyFields(n), nil, n%3 == 0); err != nil {
			t.Fatal(err)
		}
		s, _ := readN(t, priv)
		if s.Seq != uint64(n) || !reflect.DeepEqual(state(t, s.Payload), wantState(t, n)) {
			t.Fatalf("save %d: read seq %d %s", n, s.Seq, s.Payload)
		}
		if n > 4 { // each file's first save is a base
			for i := range before {
				if grew := j.end[i] - before[i]; grew > 1000 {
					t.Fatalf("save %d wrote %d bytes to file %d: more than what changed", n, grew, i)
				}
			}
		}
	}
	// A new journal over the same files goes on from there, its first
	// save to each file a base.
	j.Close()
	j = openJ(t, priv)
	if err := j.SaveFields(toyFields(13), nil, true); err != nil {
		t.Fatal(err)
	}
	if s, _ := readN(t, priv); s.Seq != 13 || !reflect.DeepEqual(state(t, s.Payload), wantState(t, 13)) {
		t.Fatalf("after reopening: seq %d %s", s.Seq, s.Payload)
	}
}

// A crash in the middle of an append (any prefix of the record written,
// the rest zeros or missing) leaves the save before it in force.
func TestTornAppendKeepsThePreviousSave(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	for n := 1; n <= 6; n++ {
		j.SaveFields(toyFields(n), nil, n <= 4) // 5 and 6: appended unsynced to one file
	}
	_, idx := readN(t, priv)
	path := loopdir.Private(priv).Journal(idx)
	whole, _ := os.ReadFile(path)
	start := int(j.end[idx]) - 1
	for start > 0 && !bytes.HasPrefix(whole[start:], []byte(journalMagic)) {
		start--
	}
	for cut := start; cut < int(j.end[idx]); cut++ {
		// Cut off (the file's length not updated), or zeros where the
		// record's end did not land: the latter looks like damage and is
		// said, the former is a record never written.
		for k, torn := range [][]byte{whole[:cut], append(append([]byte(nil), whole[:cut]...), make([]byte, len(whole)-cut)...)} {
			os.WriteFile(path, torn, 0o600)
			s, _ := readN(t, priv)
			if s.Seq != 5 || !reflect.DeepEqual(state(t, s.Payload), wantState(t, 5)) || k == 0 && s.Dropped != "" {
				t.Fatalf("cut at %d: read seq %d %s (dropped %q), want save 5", cut, s.Seq, s.Payload, s.Dropped)
			}
		}
	}
}

// A whole record that does not check out (a byte changed) is refused:
// the state is the save before it, and the load says what it left out.
func TestCorruptRecordIsDroppedAndSaid(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	for n := 1; n <= 7; n++ {
		j.SaveFields(toyFields(n), nil, n <= 5)
	}
	_, idx := readN(t, priv) // 6 and 7, appended to the same file
	path := loopdir.Private(priv).Journal(idx)
	whole, _ := os.ReadFile(path)
	at := bytes.LastIndex(whole[:j.end[idx]], []byte(journalMagic+" 2 6 "))
	if at < 0 {
		t.Fatalf("no record of save 6 in %q", whole)
	}
	bad := append([]byte(nil), whole...)
	bad[j.end[idx]-int64(len("7}"))+0] ^= 0x01 // in save 7's payload
	bad[at+len(whole[at:])-len(whole[at:])+bytes.IndexByte(whole[at:], '\n')+3] ^= 0x01
	os.WriteFile(path, bad, 0o600)
	s, _ := readN(t, priv)
	if s.Seq != 5 || !reflect.DeepEqual(state(t, s.Payload), wantState(t, 5)) {
		t.Fatalf("read seq %d %s, want save 5", s.Seq, s.Payload)
	}
	if !strings.Contains(s.Dropped, "save 6") || !strings.Contains(s.Dropped, "did not check out") || !strings.Contains(s.Dropped, path) {
		t.Fatalf("what was dropped: %q", s.Dropped)
	}
	j.Close()
	j = openJ(t, priv)
	if j.Dropped() != s.Dropped {
		t.Fatalf("the journal opened says %q, want %q", j.Dropped(), s.Dropped)
	}
	// The journal goes on from save 5: the next save is a base over the
	// file of the one dropped.
	if err := j.SaveFields(toyFields(8), nil, true); err != nil {
		t.Fatal(err)
	}
	if s, _ := readN(t, priv); s.Seq != 6 || !reflect.DeepEqual(state(t, s.Payload), wantState(t, 8)) || s.Dropped != "" {
		t.Fatalf("after the next save: seq %d %s %q", s.Seq, s.Payload, s.Dropped)
	}
}

// Saves that are not synced never write to the file of the last synced
// save: a power loss that takes every unsynced write (any part of them,
// the other file garbage) falls back to it, compaction or not.
func TestUnsyncedAppendsSpareTheSyncedFile(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	for n := 1; n < 300; n++ {
		durable := n%50 == 0
		var synced []byte
		last := j.Last()
		if !durable {
			synced, _ = os.ReadFile(loopdir.Private(priv).Journal(last))
		}
		if err := j.SaveFields(toyFields(n), nil, durable); err != nil {
			t.Fatal(err)
		}
		if durable {
			continue
		}
		if now, _ := os.ReadFile(loopdir.Private(priv).Journal(last)); j.Last() != last || !bytes.Equal(now, synced) {
			t.Fatalf("save %d (not synced) wrote to the file of the last synced save", n)
		}
	}
	last := j.Last()
	os.WriteFile(loopdir.Private(priv).Journal(1-last), []byte("garbage"), 0o600)
	if s, _ := readN(t, priv); s.Seq != 250 || !reflect.DeepEqual(state(t, s.Payload), wantState(t, 250)) {
		t.Fatalf("after losing the unsynced saves: seq %d, want 250", s.Seq)
	}
}

// Compaction writes a base over the start of the file that does not hold
// the last synced save; stopped at any byte (the rest of the file the old
// chain's), the state is the last synced save; done, the new base's; and
// the old chain's records left past it are never read.
func TestCompactionInterruptedAtEachStep(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	big := func(n int) []Field {
		// A state whose deltas are small: compaction after 64 KiB of them.
		return append(toyFields(n), Field{Key: "huge", Value: []byte(`"` + strings.Repeat("h", 8<<10) + `"`)})
	}
	want := func(n int) map[string]any { return state(t, compact(big(n))) }
	var n, synced int
	for n = 1; ; n++ {
		i := 1 - j.Last()
		if n > 2 && j.deltas[i] > max(j.baseLen[i], compactAt) {
			break // save n compacts file i
		}
		durable := n <= 2 || n%50 == 0
		if err := j.SaveFields(big(n), nil, durable); err != nil {
			t.Fatal(err)
		}
		if durable {
			synced = n
		}
	}
	i := 1 - j.Last()
	path := loopdir.Private(priv).Journal(i)
	old, _ := os.ReadFile(path)
	if err := j.SaveFields(big(n), nil, true); err != nil {
		t.Fatal(err)
	}
	if j.end[i] >= int64(len(old)) || j.base[i] != uint64(n) {
		t.Fatalf("save %d did not compact file %d (end %d of %d)", n, i, j.end[i], len(old))
	}
	now, _ := os.ReadFile(path)
	if s, idx := readN(t, priv); idx != i || s.Seq != uint64(n) || !reflect.DeepEqual(state(t, s.Payload), want(n)) {
		t.Fatalf("compacted: seq %d from file %d", s.Seq, idx)
	}
	step := func(c int) int {
		if c < 300 || c > int(j.end[i])-300 {
			return c + 1
		}
		return c + 97
	}
	for cut := 0; cut < int(j.end[i]); cut = step(cut) {
		mixed := append(append([]byte(nil), now[:cut]...), old[cut:]...)
		os.WriteFile(path, mixed, 0o600)
		// The last synced save, in the other file; or, when the cut left
		// the old chain's base whole, that chain's last save.
		s, idx := readN(t, priv)
		if got := state(t, s.Payload); !(idx != i && s.Seq == uint64(synced) && reflect.DeepEqual(got, want(synced))) &&
			!(cut < 40 && s.Seq == uint64(n-1) && reflect.DeepEqual(got, want(n-1))) {
			t.Fatalf("compaction stopped at byte %d: seq %d from file %d, want the last synced save (%d) from the other", cut, s.Seq, idx, synced)
		}
	}
	os.WriteFile(path, now, 0o600)
	// The saves after it go on from the new base, past the old bytes.
	for m := n + 1; m <= n+4; m++ {
		if err := j.SaveFields(big(m), nil, m%2 == 0); err != nil {
			t.Fatal(err)
		}
		if s, _ := readN(t, priv); s.Seq != uint64(m) || !reflect.DeepEqual(state(t, s.Payload), want(m)) {
			t.Fatalf("save %d after compaction: read seq %d", m, s.Seq)
		}
	}
}

// A journal of the last release (one whole state a slot, format 1, with
// what an older longer save left past it) is read, and the first saves
// after it replace it with records.
func TestUpgradeFromSlots(t *testing.T) {
	_, priv := newPriv(t)
	os.WriteFile(loopdir.Private(priv).Journal(0), append(encodeSlot(41, [2]string{}, []byte(`{"n":41}`)), `"tail of an older save"}`...), 0o600)
	os.WriteFile(loopdir.Private(priv).Journal(1), encodeSlot(40, [2]string{}, []byte(`{"n":40}`)), 0o600)
	if s, idx := readN(t, priv); s.Seq != 41 || idx != 0 || string(s.Payload) != `{"n":41}` {
		t.Fatalf("the last release's slots: seq %d %q from %d", s.Seq, s.Payload, idx)
	}
	j := openJ(t, priv)
	for n := 42; n <= 45; n++ {
		if err := j.SaveFields([]Field{{Key: "n", Value: fmt.Appendf(nil, "%d", n)}}, nil, n%2 == 0); err != nil {
			t.Fatal(err)
		}
		if s, _ := readN(t, priv); s.Seq != uint64(n) || string(s.Payload) != fmt.Sprintf(`{"n":%d}`, n) {
			t.Fatalf("save %d: seq %d %q", n, s.Seq, s.Payload)
		}
	}
}

// The public copy made of the members' indented values is Indented's.
func TestIndentedFieldsAreIndented(t *testing.T) {
	fields := []Field{{Key: "a", Value: []byte(`{"x":[1,{"y":[]}],"z":{}}`)}, {Key: "gone"}, {Key: "<b>", Value: []byte(`"s"`)}, {Key: "c", Value: []byte(`[]`)}}
	if got, want := indented(fields), Indented(compact(fields)); !bytes.Equal(got, want) {
		t.Fatalf("indented:\n%s\nIndented:\n%s", got, want)
	}
	if got := indented([]Field{{Key: "gone"}}); string(got) != string(Indented([]byte(`{}`))) {
		t.Fatalf("no member: %q", got)
	}
}
