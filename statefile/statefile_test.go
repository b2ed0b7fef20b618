package statefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// toy is a state as the room sees one: bytes that a codec gives a meaning.
type toy struct {
	N       int  `json:"n"`
	Rebuilt bool `json:"rebuilt,omitempty"`
	Claimed int  `json:"claimed,omitempty"` // what the untrusted copy said, when rebuilt
}

var toyCodec = Codec[*toy]{
	Decode: func(b []byte) (*toy, error) {
		var t toy
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, err
		}
		return &t, nil
	},
	Problems: func(t *toy) []string {
		if t.N < 0 {
			return []string{"n is negative"}
		}
		return nil
	},
	Fresh: func() *toy { return &toy{} },
	Rebuild: func(dir string, claimed *toy) *toy {
		t := &toy{Rebuilt: true}
		if claimed != nil {
			t.Claimed = claimed.N
		}
		return t
	},
}

func saveToy(t *testing.T, dir string, n int) []byte {
	t.Helper()
	data, _ := json.Marshal(toy{N: n})
	if err := SaveAlone(dir, data); err != nil {
		t.Fatal(err)
	}
	pub, _ := os.ReadFile(loopdir.Dir(dir).State())
	return pub
}

func trusted(t *testing.T, dir string) (*toy, []string) {
	t.Helper()
	st, issues, err := LoadTrusted(dir, toyCodec)
	if err != nil {
		t.Fatal(err)
	}
	return st, issues
}

// The engine's copy is its journal: a public state.json that is one of the
// last two it wrote is accepted (a crash may come between the journal and
// the copy); any other is reported and the journal's state is used; a
// forged private state.json is not read while a journal exists.
func TestPublicCopyThatDoesNotMatch(t *testing.T) {
	dir, _ := newPriv(t)
	older := saveToy(t, dir, 3)
	newer := saveToy(t, dir, 4)
	if want := string(Indented([]byte(`{"n":4}`))); string(newer) != want {
		t.Fatalf("public copy %q, want %q", newer, want)
	}
	if priv, _ := os.ReadFile(loopdir.PrivateOf(dir).State()); !bytes.Equal(priv, newer) {
		t.Fatalf("private copy %q, want the public one", priv)
	}
	if st, issues := trusted(t, dir); len(issues) != 0 || st.N != 4 {
		t.Fatalf("untouched: %+v %v", st, issues)
	}
	os.WriteFile(loopdir.Dir(dir).State(), older, 0o600)
	if st, issues := trusted(t, dir); len(issues) != 0 || st.N != 4 {
		t.Fatalf("the previous public copy: %+v %v", st, issues)
	}
	os.WriteFile(loopdir.PrivateOf(dir).State(), []byte(`{"n":0}`), 0o600)
	if st, _ := trusted(t, dir); st.N != 4 {
		t.Fatalf("the private copy was read over the journal: %+v", st)
	}
	if st, err := Load(dir, toyCodec); err != nil || st.N != 4 {
		t.Fatalf("Load: %+v %v", st, err)
	}
	for _, forged := range [][]byte{
		bytes.Replace(older, []byte(`3`), []byte(`0`), 1),
		append(append([]byte(nil), newer...), ' '),
		[]byte(`{"n":4}`), // the journal's payload itself, not a copy the engine wrote
	} {
		os.WriteFile(loopdir.Dir(dir).State(), forged, 0o600)
		st, issues := trusted(t, dir)
		if len(issues) != 1 || !strings.Contains(issues[0], "changed by something other than the engine") || st.N != 4 || st.Rebuilt {
			t.Fatalf("a forged public copy %q: %+v %v", forged, st, issues)
		}
	}
	// Three saves on, the oldest copy is no longer one of the last two.
	saveToy(t, dir, 5)
	os.WriteFile(loopdir.Dir(dir).State(), older, 0o600)
	if st, issues := trusted(t, dir); len(issues) != 1 || st.N != 5 {
		t.Fatalf("a copy three saves old: %+v %v", st, issues)
	}
}

// A loop last run by a version without a journal: the private state.json
// is the engine's copy, and the public one must equal it.
func TestNoJournalThePrivateCopyIsTheEngines(t *testing.T) {
	dir, priv := newPriv(t)
	pub := saveToy(t, dir, 6)
	RemoveJournal(priv)
	if st, issues := trusted(t, dir); len(issues) != 0 || st.N != 6 {
		t.Fatalf("an older version's state: %+v %v", st, issues)
	}
	os.WriteFile(loopdir.Dir(dir).State(), bytes.Replace(pub, []byte(`6`), []byte(`1`), 1), 0o600)
	if st, issues := trusted(t, dir); len(issues) != 1 || st.N != 6 {
		t.Fatalf("a public copy unlike the private one: %+v %v", st, issues)
	}
	if st, err := Read(dir, toyCodec); err != nil || st.N != 6 {
		t.Fatalf("Read: %+v %v", st, err)
	}
}

// A state with no engine copy, or one that is unreadable or impossible,
// is not trusted: it is rebuilt, told what the untrusted copy claimed.
func TestUntrustedStateIsRebuilt(t *testing.T) {
	dir, priv := newPriv(t)
	if st, issues := trusted(t, dir); len(issues) != 0 || st.Rebuilt || st.N != 0 {
		t.Fatalf("a loop that never ran: %+v %v", st, issues)
	}
	if st, err := Load(dir, toyCodec); err != nil || st == nil || st.Rebuilt {
		t.Fatalf("Load of a loop that never ran: %+v %v", st, err)
	}
	if _, err := Read(dir, toyCodec); !os.IsNotExist(err) {
		t.Fatalf("Read with no engine copy: %v", err)
	}
	// Only a public copy (written by hand, or by an agent).
	os.MkdirAll(filepath.Dir(loopdir.Dir(dir).State()), 0o700)
	os.WriteFile(loopdir.Dir(dir).State(), []byte(`{"n":9}`), 0o600)
	if st, issues := trusted(t, dir); len(issues) != 1 || !st.Rebuilt || st.Claimed != 9 || !strings.Contains(issues[0], "no engine copy") {
		t.Fatalf("a public copy alone: %+v %v", st, issues)
	}
	if st, err := Load(dir, toyCodec); err != nil || st.N != 9 {
		t.Fatalf("Load shows the public copy when there is no other: %+v %v", st, err)
	}
	os.WriteFile(loopdir.Dir(dir).State(), []byte(`{"n":`), 0o600)
	if st, issues := trusted(t, dir); len(issues) != 1 || !st.Rebuilt || st.Claimed != 0 {
		t.Fatalf("an unreadable public copy alone: %+v %v", st, issues)
	}
	if _, err := Load(dir, toyCodec); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Fatalf("Load of an unreadable public copy: %v", err)
	}
	// A public copy that cannot be read at all is no fresh start either.
	os.Remove(loopdir.Dir(dir).State())
	os.Mkdir(loopdir.Dir(dir).State(), 0o700)
	if st, issues := trusted(t, dir); len(issues) != 1 || !st.Rebuilt {
		t.Fatalf("a public copy that cannot be read: %+v %v", st, issues)
	}
	os.Remove(loopdir.Dir(dir).State())
	// An impossible engine copy, and an unreadable one.
	for _, c := range []struct{ payload, why string }{{`{"n":-1}`, "impossible: n is negative"}, {`{"n":`, "unreadable"}} {
		payload, why := c.payload, c.why
		RemoveJournal(priv)
		j := openJ(t, priv)
		j.Write([]byte(payload), nil, true)
		j.Close()
		st, issues := trusted(t, dir)
		if len(issues) != 1 || !st.Rebuilt || st.Claimed != 0 || !strings.Contains(issues[0], why) {
			t.Fatalf("engine copy %s: %+v %v", payload, st, issues)
		}
	}
	if _, err := Read(dir, toyCodec); err == nil || !strings.Contains(err.Error(), loopdir.Private(priv).Journal(0)+" is corrupt") {
		t.Fatalf("Read of an unreadable journal: %v", err)
	}
}

// An engine copy that cannot be read for another reason than its absence
// is an error, not a fresh start.
func TestEngineCopyUnreadableIsAnError(t *testing.T) {
	dir, priv := newPriv(t)
	os.Mkdir(loopdir.Private(priv).State(), 0o700) // a folder where the private state.json should be
	if _, _, err := LoadTrusted(dir, toyCodec); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadTrusted: %v", err)
	}
}

// Save writes the public copy only when asked, and the digest of the one it
// writes goes to the journal with the state.
func TestSaveWritesTheCopyWhenAsked(t *testing.T) {
	dir, priv := newPriv(t)
	j := openJ(t, priv)
	if view, err := Save(dir, j, []byte(`{"n":1}`), false, false); err != nil || view != nil {
		t.Fatalf("a save without copy: %q %v", view, err)
	}
	if _, err := os.Stat(loopdir.Dir(dir).State()); !os.IsNotExist(err) {
		t.Fatalf("a save without copy wrote one: %v", err)
	}
	view, err := Save(dir, j, []byte(`{"n":2}`), true, true)
	pub, _ := os.ReadFile(loopdir.Dir(dir).State())
	if err != nil || !bytes.Equal(view, pub) || string(pub) != "{\n  \"n\": 2\n}\n" {
		t.Fatalf("a save with copy: %q, file %q, %v", view, pub, err)
	}
	if s, _, _ := ReadJournal(priv); string(s.Payload) != `{"n":2}` || !s.PublicMatches(pub) {
		t.Fatalf("the journal after a save with copy: %q", s.Payload)
	}
	// Saves without a copy (a note, a run in flight) leave the digests of
	// the copies as they were: the copy on disk is still the engine's.
	for _, p := range []string{`{"n":3}`, `{"n":4}`, `{"n":5}`} {
		if _, err := Save(dir, j, []byte(p), false, false); err != nil {
			t.Fatal(err)
		}
	}
	if st, issues := trusted(t, dir); len(issues) != 0 || st.N != 5 {
		t.Fatalf("the copy of the last save that wrote one: %+v %v", st, issues)
	}
	if err := WritePrivate(dir, []byte(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(loopdir.PrivateOf(dir).State()); !bytes.Equal(b, pub) {
		t.Fatalf("private copy %q", b)
	}
}

// A copy is written into a spare file and exchanged with the old one; a
// spare planted as a symlink or a hard link is never written through.
func TestWriteCopyNeverWritesThroughAPlantedSpare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	next := filepath.Join(dir, ".state.json.next")
	victim := filepath.Join(dir, "victim")
	for i, plant := range []func(){
		func() { os.Symlink(victim, next) },
		func() { os.Link(victim, next) },
	} {
		os.WriteFile(victim, []byte("precious"), 0o600)
		os.Remove(path)
		os.Remove(next)
		if err := WriteCopy(path, []byte("one")); err != nil {
			t.Fatal(err)
		}
		os.Remove(next)
		plant()
		for _, want := range []string{"two, longer", "3"} {
			if err := WriteCopy(path, []byte(want)); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != want {
				t.Fatalf("plant %d: state.json holds %q, want %q", i, b, want)
			}
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("plant %d: written through to %q", i, b)
		}
	}
}
