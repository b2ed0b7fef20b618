package statefile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// newPriv is a loop folder's private folder, made, under a state root of
// the test's own.
func newPriv(t *testing.T) (dir, priv string) {
	t.Helper()
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir = t.TempDir()
	priv, err := loopdir.PrivateOf(dir).Ensure()
	if err != nil {
		t.Fatal(err)
	}
	return dir, priv
}

func openJ(t *testing.T, priv string) *Journal {
	t.Helper()
	j, err := OpenJournal(priv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

// A save torn by a crash (any prefix of the slot written, the rest zeros
// or cut off) or with one byte changed leaves the previous save in force.
func TestTornSlotKeepsThePreviousSave(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	// The newer save is longer than a read's first buffer: a cut one must
	// be refused by its length, before its CRC is computed.
	newer := `{"n":2,"pad":"` + strings.Repeat("x", 2000) + `"}`
	for _, p := range []string{`{"n":1}`, newer} {
		if err := j.Write([]byte(p), nil, true); err != nil {
			t.Fatal(err)
		}
	}
	s, idx, ok := ReadJournal(priv)
	if !ok || string(s.Payload) != newer {
		t.Fatalf("newest save: %q %v", s.Payload, ok)
	}
	path := loopdir.Private(priv).Journal(idx)
	whole, _ := os.ReadFile(path)
	// Every cut within the header and the payload's start, then every 37th.
	step := func(i int) int {
		if i < 200 {
			return i + 1
		}
		return i + 37
	}
	for cut := 0; cut < len(whole); cut = step(cut) {
		for _, torn := range [][]byte{
			append(append([]byte(nil), whole[:cut]...), bytes.Repeat([]byte{0}, len(whole)-cut)...),
			whole[:cut],
		} {
			os.WriteFile(path, torn, 0o600)
			if s, _, ok := ReadJournal(priv); !ok || string(s.Payload) != `{"n":1}` {
				t.Fatalf("cut at %d of %d: read %q (%v), want the previous save", cut, len(whole), s.Payload, ok)
			}
		}
	}
	for i := 0; i < len(whole); i = step(i) {
		bad := append([]byte(nil), whole...)
		bad[i] ^= 0x01
		os.WriteFile(path, bad, 0o600)
		if s, _, _ := ReadJournal(priv); string(s.Payload) != `{"n":1}` {
			t.Fatalf("byte %d changed: read %q, want the previous save", i, s.Payload)
		}
	}
}

// The whole slot with the higher sequence number wins, whichever file it
// is in; a slot claiming a higher number that does not check out does not.
func TestNewerSlotWins(t *testing.T) {
	_, priv := newPriv(t)
	for _, c := range []struct{ seq0, seq1 uint64 }{{7, 3}, {3, 7}, {1, 2}, {2, 1}} {
		for i, seq := range []uint64{c.seq0, c.seq1} {
			os.WriteFile(loopdir.Private(priv).Journal(i), encodeSlot(seq, [2]string{}, fmt.Appendf(nil, `{"n":%d}`, seq)), 0o600)
		}
		newest := max(c.seq0, c.seq1)
		s, idx, ok := ReadJournal(priv)
		if !ok || s.Seq != newest || string(s.Payload) != fmt.Sprintf(`{"n":%d}`, newest) || (idx == 0) != (c.seq0 == newest) {
			t.Fatalf("slots %d and %d: read seq %d %q from slot %d; want %d", c.seq0, c.seq1, s.Seq, s.Payload, idx, newest)
		}
	}
	// Slot 1 says 99 but its CRC was made for another payload.
	forged := encodeSlot(99, [2]string{}, []byte(`{"n":99}`))
	copy(forged[bytes.IndexByte(forged, '\n')+1:], `{"n":98}`)
	os.WriteFile(loopdir.Private(priv).Journal(1), forged, 0o600)
	if s, idx, _ := ReadJournal(priv); idx != 0 || s.Seq != 2 {
		t.Fatalf("a slot that does not check out won: seq %d from slot %d", s.Seq, idx)
	}
}

// A journal opened again goes on from its newest save: the next save is
// newer than every one before it, and lands in the other slot.
func TestReopenedJournalGoesOn(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	for i := 1; i <= 3; i++ {
		j.Write(fmt.Appendf(nil, `{"n":%d}`, i), nil, true)
	}
	j.Close()
	j = openJ(t, priv)
	_, before, _ := ReadJournal(priv)
	if j.Last() != before {
		t.Fatalf("reopened on slot %d, the newest is in %d", j.Last(), before)
	}
	if err := j.Write([]byte(`{"n":4}`), nil, true); err != nil {
		t.Fatal(err)
	}
	s, idx, _ := ReadJournal(priv)
	if string(s.Payload) != `{"n":4}` || s.Seq != 4 || idx == before {
		t.Fatalf("after reopening: read %q seq %d from slot %d (the previous newest was in %d)", s.Payload, s.Seq, idx, before)
	}
}

// Saves that are not synced never overwrite the slot of the last synced
// save, and two synced saves in a row never share a slot; a synced save
// counts one sync.
func TestUnsyncedWritesSpareTheSyncedSlot(t *testing.T) {
	_, priv := newPriv(t)
	j := openJ(t, priv)
	before := Syncs.Load()
	j.Write([]byte(`"synced"`), nil, true)
	synced := j.Last()
	for i := 0; i < 3; i++ {
		j.Write([]byte(`"note"`), nil, false)
		if j.Last() != synced {
			t.Fatal("an unsynced save moved the synced slot")
		}
	}
	if n := Syncs.Load() - before; n != 1 {
		t.Fatalf("%d syncs for one synced save and three unsynced", n)
	}
	os.WriteFile(loopdir.Private(priv).Journal(1-synced), []byte("garbage"), 0o600)
	if s, _, ok := ReadJournal(priv); !ok || string(s.Payload) != `"synced"` {
		t.Fatalf("after losing the unsynced writes: %q %v", s.Payload, ok)
	}
	j.Write([]byte(`"second"`), nil, true)
	if j.Last() == synced {
		t.Fatal("two synced saves in a row went to the same slot")
	}
}

// A slot the last release wrote (format 1: one whole state) is read; a
// base written now is format 2, byte for byte as pinned here.
func TestSlotFormatUnchanged(t *testing.T) {
	const pub = "{\n  \"n\": 3\n}\n"
	const old = "looprinter-state 1 12 7 de006bca99219bf37cecc4bc9f96fdc2189965764765fe883d7fe458227310f3 - 4cf9875a\n{\"n\":3}"
	const golden = "looprinter-state 2 12 12 7 de006bca99219bf37cecc4bc9f96fdc2189965764765fe883d7fe458227310f3 - faecfa7c\n{\"n\":3}"
	_, priv := newPriv(t)
	os.WriteFile(loopdir.Private(priv).Journal(0), []byte(old), 0o600)
	s, _, ok := ReadJournal(priv)
	if !ok || s.Seq != 12 || string(s.Payload) != `{"n":3}` || !s.PublicMatches([]byte(pub)) || s.PublicMatches([]byte(pub+" ")) {
		t.Fatalf("a slot of the last release: %+v %v", s, ok)
	}
	RemoveJournal(priv)
	j := openJ(t, priv)
	j.seq = 11 // the next save is the 12th
	if err := j.Write([]byte(`{"n":3}`), Indented([]byte(`{"n":3}`)), true); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(loopdir.Private(priv).Journal(j.Last()))
	if string(got) != golden {
		t.Fatalf("a base written now:\n%q\nwant:\n%q", got, golden)
	}
	if string(Indented([]byte(`{"n":3}`))) != pub {
		t.Fatalf("the public copy's form changed: %q", Indented([]byte(`{"n":3}`)))
	}
	RemoveJournal(priv)
	for i := 0; i < 2; i++ {
		if _, err := os.Stat(filepath.Join(priv, fmt.Sprintf(".state.%d", i))); err == nil {
			t.Fatalf("RemoveJournal left .state.%d", i)
		}
	}
}
