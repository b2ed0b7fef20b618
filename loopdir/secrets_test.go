package loopdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every other loop's records folder and holdout files, as its engine
// noted them, and none of the loop's own or of a loop that holds it.
func TestOtherSecrets(t *testing.T) {
	root := t.TempDir()
	t.Setenv("LOOPRINTER_STATE_DIR", filepath.Join(root, "state"))
	a, b, top := filepath.Join(root, "repo", "a"), filepath.Join(root, "repo", "b"), filepath.Join(root, "repo")
	for _, d := range []string{a, b} {
		os.MkdirAll(filepath.Join(d, RecordsDir), 0o755)
	}
	os.WriteFile(filepath.Join(a, "hidden.sh"), []byte("x"), 0o600)
	if err := Dir(a).WriteSecrets([]string{"hidden.sh", "gone.sh"}); err != nil {
		t.Fatal(err)
	}
	if err := Dir(b).WriteSecrets(nil); err != nil {
		t.Fatal(err)
	}
	if err := Dir(top).WriteSecrets(nil); err != nil {
		t.Fatal(err)
	}
	got := OtherSecrets(b)
	want := []string{filepath.Join(a, "hidden.sh"), filepath.Join(a, RecordsDir)}
	if !slices.Equal(got, want) {
		t.Errorf("b sees masked %v, want %v", got, want)
	}
	got = OtherSecrets(a)
	if !slices.Equal(got, []string{filepath.Join(b, RecordsDir)}) {
		t.Errorf("a sees masked %v", got)
	}
	// A loop's folder inside another's is its own: the top loop's
	// records are not masked for a, and a's are for the top loop.
	if got := OtherSecrets(top); !slices.Contains(got, filepath.Join(a, "hidden.sh")) {
		t.Errorf("top sees masked %v", got)
	}
	// A forged or broken file is skipped.
	broken, _ := PrivateOf(filepath.Join(root, "x")).Ensure()
	if err := os.WriteFile(filepath.Join(broken, "secrets.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := OtherSecrets(b); !slices.Equal(got, want) {
		t.Errorf("with a broken file: %v", got)
	}
}
