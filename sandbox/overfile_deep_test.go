//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// A file laid over one in a subfolder of a folder shown anew (a Python's
// standard library with no sitecustomize.py, and its encodings/__init__.py
// laid too): bubblewrap does not follow the fresh folder's links (they
// lead to the folder bound aside, by absolute paths of the view), so the
// file is laid before the folder is shown anew, whose aside carries it.
func TestOverFileBeneathFreshFolder(t *testing.T) {
	f := newBoxFixture(t)
	root := filepath.Dir(f.tree)
	sys1 := filepath.Join(root, "system")
	if err := os.MkdirAll(filepath.Join(sys1, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(sys1, "pkg", "__init__.py"), "the system's own\n")
	must(filepath.Join(sys1, "pkg", "other.py"), "another of the system's\n")
	engine := filepath.Join(f.priv, "engine", "laid.py")
	must(engine, "the engine's\n")
	over := []OverFile{{From: engine, To: filepath.Join(sys1, "new.py")}, {From: engine, To: filepath.Join(sys1, "pkg", "__init__.py")}}
	line := "cd " + sys1 + " && cat new.py pkg/__init__.py pkg/other.py"
	want := "the engine's\nthe engine's\nanother of the system's\n"
	for _, served := range []bool{true, false} {
		o := CheckBoxOptions{Over: over}
		o.View.AllowRead = []string{sys1}
		b := f.box(t, Bwrap, o)
		var out string
		var code int
		if served {
			out, code = serveBox(t, b, f.tree, line, f.env)
		} else {
			out, code = runBox(t, b, f.tree, line, f.env)
		}
		if code != 0 || out != want {
			t.Errorf("served %v: exit %d, output:\n%s\nwant:\n%s", served, code, out, want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(sys1, "pkg", "__init__.py")); string(data) != "the system's own\n" {
		t.Errorf("the host's file is now %q", data)
	}
}
