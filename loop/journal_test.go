package loop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// A save torn by a crash (any prefix of the slot written, or garbage) leaves
// the previous save in force; a whole save is read back.
func TestJournalTornWriteKeepsThePreviousSave(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	priv := string(loopdir.PrivateOf(dir))
	os.MkdirAll(priv, 0o700)
	j, err := openJournal(priv)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if err := j.write([]byte(`{"iterations":1}`), nil, true); err != nil {
		t.Fatal(err)
	}
	if err := j.write([]byte(`{"iterations":2}`), nil, true); err != nil {
		t.Fatal(err)
	}
	s, idx, ok := readJournal(priv)
	if !ok || string(s.payload) != `{"iterations":2}` {
		t.Fatalf("newest save: %q %v", s.payload, ok)
	}
	whole, _ := os.ReadFile(loopdir.Private(priv).Journal(idx))
	for cut := 0; cut < len(whole); cut++ {
		torn := append(append([]byte(nil), whole[:cut]...), bytes.Repeat([]byte{0}, len(whole)-cut)...)
		os.WriteFile(loopdir.Private(priv).Journal(idx), torn, 0o600)
		s, _, ok := readJournal(priv)
		if !ok || string(s.payload) != `{"iterations":1}` {
			t.Fatalf("cut at %d of %d: read %q (%v), want the previous save", cut, len(whole), s.payload, ok)
		}
	}
	// One byte of the payload changed: the CRC refuses it.
	bad := append([]byte(nil), whole...)
	bad[len(bad)-2] = '3'
	os.WriteFile(loopdir.Private(priv).Journal(idx), bad, 0o600)
	if s, _, _ := readJournal(priv); string(s.payload) != `{"iterations":1}` {
		t.Fatalf("a changed byte was accepted: %q", s.payload)
	}
}

// Saves that are not synced (the agent's process group, the wall time while
// it runs) never overwrite the slot of the last synced save: whatever
// happens to them, the synced save survives.
func TestJournalUnsyncedWritesSpareTheSyncedSlot(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	priv := string(loopdir.PrivateOf(dir))
	os.MkdirAll(priv, 0o700)
	j, err := openJournal(priv)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	j.write([]byte(`"synced"`), nil, true)
	synced := j.last
	for i := 0; i < 3; i++ {
		j.write([]byte(`"note"`), nil, false)
		if j.last != synced {
			t.Fatal("an unsynced save moved the synced slot")
		}
	}
	// Lose every unsynced write (a power loss): the synced save is there.
	os.WriteFile(loopdir.Private(priv).Journal(1-synced), []byte("garbage"), 0o600)
	if s, _, ok := readJournal(priv); !ok || string(s.payload) != `"synced"` {
		t.Fatalf("after losing the unsynced writes: %q %v", s.payload, ok)
	}
	// The next synced save goes to the other slot, and the one after it
	// back: two in a row never share a slot.
	j.write([]byte(`"second"`), nil, true)
	if j.last == synced {
		t.Fatal("two synced saves in a row went to the same slot")
	}
}

// The engine's copy of the state is its journal: a public state.json that is
// one of the last two the engine wrote is accepted (a crash may come between
// the journal and the copy), anything else is reported and replaced; the
// private state.json copy is not what a restart reads.
func TestJournalIsTheEngineCopy(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	st := freshState()
	st.Iterations, st.Phase = 3, PhaseBuild
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	older, _ := os.ReadFile(loopdir.Dir(dir).State())
	st.Iterations = 4
	if err := st.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, issues, err := loadTrusted(dir)
	if err != nil || len(issues) != 0 || got.Iterations != 4 {
		t.Fatalf("untouched: %+v %v %v", got, issues, err)
	}
	// The copy one save behind (the newest never reached it).
	os.WriteFile(loopdir.Dir(dir).State(), older, 0o600)
	if got, issues, _ = loadTrusted(dir); len(issues) != 0 || got.Iterations != 4 {
		t.Fatalf("the previous public copy: %+v %v", got, issues)
	}
	// A forged private copy changes nothing: the journal is read.
	os.WriteFile(loopdir.PrivateOf(dir).State(), []byte(`{"v":1,"iterations":0,"phase":"done","outcome":"done"}`), 0o600)
	if got, _, _ = loadTrusted(dir); got.Iterations != 4 || got.Phase != PhaseBuild {
		t.Fatalf("the private copy was read over the journal: %+v", got)
	}
	if got, err := LoadState(dir); err != nil || got.Iterations != 4 {
		t.Fatalf("LoadState: %+v %v", got, err)
	}
	// Any other public copy is a forgery.
	os.WriteFile(loopdir.Dir(dir).State(), bytes.Replace(older, []byte(`"iterations": 3`), []byte(`"iterations": 0`), 1), 0o600)
	if got, issues, _ = loadTrusted(dir); len(issues) != 1 || got.Iterations != 4 {
		t.Fatalf("a forged public copy: %+v %v", got, issues)
	}
	// No journal yet (a state written by an older version): the private
	// state.json is the engine's copy, and the public one must equal it.
	removeJournal(string(loopdir.PrivateOf(dir)))
	pub, _ := os.ReadFile(loopdir.Dir(dir).State())
	os.WriteFile(loopdir.PrivateOf(dir).State(), pub, 0o600)
	if _, issues, _ = loadTrusted(dir); len(issues) != 0 {
		t.Fatalf("an older version's state: %v", issues)
	}
	if _, err := os.Stat(filepath.Join(string(loopdir.PrivateOf(dir)), ".state.0")); err == nil {
		t.Fatal("removeJournal left a slot")
	}
}

// A copy is written into a spare file and exchanged with the old one; a
// spare planted as a symlink or a hard link is never written through.
func TestWriteCopyNeverWritesThroughAPlantedSpare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	victim := filepath.Join(dir, "victim")
	for i, plant := range []func(next string){
		func(next string) { os.Symlink(victim, next) },
		func(next string) { os.Link(victim, next) },
	} {
		os.WriteFile(victim, []byte("precious"), 0o600)
		os.Remove(path)
		os.Remove(filepath.Join(dir, ".state.json.next"))
		if err := writeCopy(path, []byte("one")); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, ".state.json.next"))
		plant(filepath.Join(dir, ".state.json.next"))
		for _, want := range []string{"two, longer", "3"} {
			if err := writeCopy(path, []byte(want)); err != nil {
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
