package wave

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/loopdir"
)

// At a restart, the live transcripts of a wave the engine died in move to
// the loop's transcripts under the records' names, never over one that is
// there; what is not a run's transcript stays.
func TestPublishLeft(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	priv := string(loopdir.PrivateOf(dir))
	tdir := loopdir.Dir(dir).Transcripts()
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tdir, "0002-b.log"), []byte("kept"), 0o600)
	a := LiveTranscript(priv, "r1", filepath.Join(tdir, "0001-a.log"))
	b := LiveTranscript(priv, "r2", filepath.Join(tdir, "0002-b.log"))
	live := filepath.Dir(a)
	os.MkdirAll(live, 0o700)
	os.WriteFile(a, []byte("run 1"), 0o600)
	os.WriteFile(b, []byte("run 2"), 0o600)
	os.WriteFile(filepath.Join(live, "nodash"), []byte("x"), 0o600)
	os.Mkdir(filepath.Join(live, "r3-dir"), 0o700)

	moved := PublishLeft(dir, priv)
	if got := moved[a]; got != filepath.Join(tdir, "0001-a.log") {
		t.Errorf("r1's went to %q", got)
	}
	if got := moved[b]; got == "" || got == filepath.Join(tdir, "0002-b.log") {
		t.Errorf("r2's went to %q: over the transcript there", got)
	}
	if data, _ := os.ReadFile(filepath.Join(tdir, "0002-b.log")); string(data) != "kept" {
		t.Errorf("a transcript there was replaced: %q", data)
	}
	if data, _ := os.ReadFile(moved[b]); string(data) != "run 2" {
		t.Errorf("r2's transcript reads %q", data)
	}
	if len(moved) != 2 {
		t.Errorf("moved %v", moved)
	}
	if _, err := os.Stat(filepath.Join(live, "nodash")); err != nil {
		t.Errorf("a file not a run's was moved: %v", err)
	}
}
