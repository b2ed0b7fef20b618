//go:build linux

package nshelper

import (
	"os"
	"path/filepath"
	"testing"
)

// The small helper beside the engine is started only when it answers the
// probe with the engine's own fingerprint: an older or another helper is
// never used.
func TestBesideOnlySameCode(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "looprinter")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	if got := beside(exe); got != "" {
		t.Fatalf("no helper beside: got %q", got)
	}
	h := filepath.Join(dir, HelperName)
	write := func(fp string, mode os.FileMode) {
		os.Remove(h)
		body := "#!/bin/sh\n[ \"$" + EnvProbe + "\" = 1 ] && echo " + fp + "\n"
		if err := os.WriteFile(h, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(Fingerprint(), 0o755)
	if got := beside(exe); got != h {
		t.Fatalf("the same helper code beside: got %q, want %q", got, h)
	}
	write("0123older", 0o755)
	if got := beside(exe); got != "" {
		t.Fatalf("another helper's fingerprint: got %q", got)
	}
	write(Fingerprint(), 0o644)
	if got := beside(exe); got != "" {
		t.Fatalf("a helper that cannot be executed: got %q", got)
	}
	if len(Fingerprint()) != 64 || Fingerprint() != Fingerprint() {
		t.Fatalf("fingerprint %q", Fingerprint())
	}
}
