package loopdir

import (
	"path/filepath"
	"testing"
)

// A path inside the loop folder is named from it; one outside, whole.
func TestRel(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ p, want string }{
		{filepath.Join(dir, "working-records", "x.log"), filepath.Join("working-records", "x.log")},
		{dir, "."},
		{"/elsewhere/y", "/elsewhere/y"},
		{filepath.Dir(dir), filepath.Dir(dir)},
	} {
		if got := Rel(dir, c.p); got != c.want {
			t.Errorf("Rel(%s) = %q, want %q", c.p, got, c.want)
		}
	}
}
