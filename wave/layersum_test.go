package wave

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/sandbox"
)

// A file's sum as a layer shows it: the layer's file where it wrote one,
// else the folder's; the same as the folder's means its target did not
// change.
func TestLayerFileSum(t *testing.T) {
	l := sandbox.Layer{Target: t.TempDir(), Upper: t.TempDir()}
	os.MkdirAll(filepath.Join(l.Target, "src"), 0o700)
	os.MkdirAll(filepath.Join(l.Upper, "src"), 0o700)
	os.WriteFile(filepath.Join(l.Target, "src", "a.go"), []byte("old"), 0o600)
	os.WriteFile(filepath.Join(l.Target, "src", "b.go"), []byte("same"), 0o600)
	os.WriteFile(filepath.Join(l.Upper, "src", "a.go"), []byte("new"), 0o600)
	if got, old := LayerFileSum(l, "src/a.go"), guard.FileSum(filepath.Join(l.Target, "src", "a.go")); got == old || got != guard.FileSum(filepath.Join(l.Upper, "src", "a.go")) {
		t.Errorf("a written file: %q (the folder's %q)", got, old)
	}
	if got := LayerFileSum(l, "src/b.go"); got != guard.FileSum(filepath.Join(l.Target, "src", "b.go")) {
		t.Errorf("an unwritten file: %q", got)
	}
	if got := LayerFileSum(l, "src/none.go"); got != guard.FileSum(filepath.Join(l.Target, "src", "none.go")) {
		t.Errorf("an absent file: %q", got)
	}
}
