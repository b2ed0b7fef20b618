//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under Landlock a check reads the bytecode the loop's warm-up left in
// the cache layer (its PYTHONPYCACHEPREFIX), read-only: the grant must
// survive the box's read rules, else every Python check compiles the
// interpreter's library again.
func TestCheckBoxLandlockReadsLayerBytecode(t *testing.T) {
	f := newBoxFixture(t)
	c := CheckCache{Dir: filepath.Join(f.priv, "engine", "cache")}
	pc := filepath.Join(c.Dir, cacheLandlock, "pycache")
	if err := os.MkdirAll(pc, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pc, "warm.pyc"), []byte("warm"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := f.box(t, Landlock, CheckBoxOptions{Cache: &c})
	out, code := runBox(t, b, f.tree, `echo "pyc=$(cat "$PYTHONPYCACHEPREFIX/warm.pyc")"; echo poison > "$PYTHONPYCACHEPREFIX/warm.pyc" || echo refused`, f.env)
	b.Close()
	if code != 0 || !strings.Contains(out, "pyc=warm") {
		t.Fatalf("the check should read the layer's bytecode (exit %d): %s", code, out)
	}
	if !strings.Contains(out, "refused") {
		t.Fatalf("the check should not write the layer's bytecode: %s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(pc, "warm.pyc")); string(got) != "warm" {
		t.Fatalf("the layer's bytecode was written: %q", got)
	}
}
