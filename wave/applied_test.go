package wave

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// At a restart, the notes of applies whose work is in the folder (the
// apply's journal is there, or the apply emptied its layer) are read
// back; a note whose apply never started, or that does not read, is
// dropped; every note is gone after.
func TestLandedReadsTheAppliesThatHappened(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	p := loopdir.PrivateOf(dir)
	priv := string(p)
	for k, n := range []Applied{
		{Run: "r1", Task: "T-1", Marked: true}, // its journal is there
		{Run: "r2", Task: "T-2", Judged: true}, // its layer emptied
		{Run: "r3", Task: "T-3"},               // its layer still full: never applied
		{Run: "r4", Task: "T-4"},               // its layer never made: emptied
	} {
		if err := WriteApplied(priv, k, n); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(p.LayerJournal(SlotLayerName(0)), []byte("j"), 0o600))
	must(os.MkdirAll(p.LayerUpper(SlotLayerName(0)), 0o700))
	must(os.WriteFile(filepath.Join(p.LayerUpper(SlotLayerName(0)), "f"), []byte("x"), 0o600))
	must(os.MkdirAll(p.LayerUpper(SlotLayerName(1)), 0o700))
	must(os.MkdirAll(p.LayerUpper(SlotLayerName(2)), 0o700))
	must(os.WriteFile(filepath.Join(p.LayerUpper(SlotLayerName(2)), "f"), []byte("x"), 0o600))
	must(os.MkdirAll(filepath.Dir(p.AppliedTask(SlotLayerName(5))), 0o700))
	must(os.WriteFile(p.AppliedTask(SlotLayerName(5)), []byte("{not json"), 0o600))

	var got []string
	for _, n := range Landed(dir, priv) {
		got = append(got, n.Run+"/"+n.Task)
	}
	if want := []string{"r1/T-1", "r2/T-2", "r4/T-4"}; !slices.Equal(got, want) {
		t.Errorf("landed %v, want %v", got, want)
	}
	for _, k := range []int{0, 1, 2, 3, 5} {
		if _, err := os.Stat(p.AppliedTask(SlotLayerName(k))); !os.IsNotExist(err) {
			t.Errorf("the note at slot %d is left: %v", k, err)
		}
	}
	if again := Landed(dir, priv); len(again) != 0 {
		t.Errorf("read twice: %v", again)
	}
	must(WriteApplied(priv, 0, Applied{Run: "r9", Task: "T-9"}))
	AppliedSaved(priv, 0)
	if again := Landed(dir, priv); len(again) != 0 {
		t.Errorf("a saved verdict's note is read: %v", again)
	}
}
