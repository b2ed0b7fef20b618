//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files of the engine's laid over paths of the machine (OverFile), in a
// folder the view shows read-only: over a file there, where none is (the
// folder's other entries still seen), and where a link leads outside the
// view; in the box's server and as a check of its own. The host's folders
// are never written.
func TestOverFilesLaid(t *testing.T) {
	f := newBoxFixture(t)
	root := filepath.Dir(f.tree)
	sys1, elsewhere := filepath.Join(root, "system"), filepath.Join(root, "elsewhere")
	for _, d := range []string{filepath.Join(sys1, "sub"), elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(sys1, "own.py"), "the system's own\n")
	must(filepath.Join(sys1, "other.py"), "another of the system's\n")
	must(filepath.Join(sys1, "sub", "deep.py"), "deep\n")
	must(filepath.Join(elsewhere, "linked.py"), "where the link leads\n")
	if err := os.Symlink(filepath.Join(elsewhere, "linked.py"), filepath.Join(sys1, "link.py")); err != nil {
		t.Fatal(err)
	}
	engine := filepath.Join(f.priv, "engine", "laid.py")
	must(engine, "the engine's\n")
	over := []OverFile{{From: engine, To: filepath.Join(sys1, "own.py")}, {From: engine, To: filepath.Join(sys1, "new.py")}, {From: engine, To: filepath.Join(sys1, "link.py")}}
	line := "cd " + sys1 + " && cat own.py new.py link.py other.py sub/deep.py; if (echo x > new.py) 2>/dev/null; then echo wrote; fi"
	want := "the engine's\nthe engine's\nthe engine's\nanother of the system's\ndeep\n"
	for _, served := range []bool{true, false} {
		o := CheckBoxOptions{Over: over}
		o.View.AllowRead = []string{sys1}
		b := f.box(t, Bwrap, o)
		var out string
		var code int
		if served {
			out, code = serveBox(t, b, f.tree, line, f.env)
			if again, _ := serveBox(t, b, f.tree, line, f.env); again != out {
				t.Errorf("the second check of the server sees otherwise:\n%s\nthen\n%s", out, again)
			}
		} else {
			out, code = runBox(t, b, f.tree, line, f.env)
		}
		if code != 0 || out != want {
			t.Errorf("served %v: exit %d, output:\n%s\nwant:\n%s", served, code, out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(sys1, "new.py")); err == nil {
		t.Error("the host's folder was written")
	}
	for p, s := range map[string]string{filepath.Join(sys1, "own.py"): "the system's own\n", filepath.Join(elsewhere, "linked.py"): "where the link leads\n"} {
		if data, _ := os.ReadFile(p); string(data) != s {
			t.Errorf("%s is now %q", p, data)
		}
	}
}

// overArgs leaves out what it cannot lay: a relative path, a source that
// is not a file, a folder at the target.
func TestOverArgsSkips(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.py")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := overArgs([]OverFile{{From: "f.py", To: file}, {From: dir, To: file}, {From: file, To: "rel.py"}, {From: file, To: dir}})
	if len(a) != 0 {
		t.Fatalf("args %q", strings.Join(a, " "))
	}
}

// Where the folder lies in a layer's target (a Python a version manager
// keeps in HOME) and holds no such file, each check gets the file in its
// own layer: the folder stays as writable as it was (a check installs into
// site-packages there), and nothing is made in the host's folder.
func TestOverFileInLayer(t *testing.T) {
	f := newBoxFixture(t)
	std := filepath.Join(f.home, ".pyenv", "lib", "python3.11")
	if err := os.MkdirAll(std, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(std, "os.py"), []byte("the standard library's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	engine := filepath.Join(f.priv, "engine", "laid.py")
	if err := os.WriteFile(engine, []byte("the engine's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := "cd " + std + " && cat sitecustomize.py os.py && echo x > installed.py && echo wrote"
	want := "the engine's\nthe standard library's\nwrote\n"
	for _, served := range []bool{true, false} {
		o := CheckBoxOptions{Over: []OverFile{{From: engine, To: filepath.Join(std, "sitecustomize.py")}}}
		o.View.AllowRead = []string{std}
		b := f.box(t, Bwrap, o)
		var out string
		var code int
		if served {
			out, code = serveBox(t, b, f.tree, line, f.env)
			if again, _ := serveBox(t, b, f.tree, line, f.env); again != out {
				t.Errorf("the second check of the server sees otherwise:\n%s\nthen\n%s", out, again)
			}
		} else {
			out, code = runBox(t, b, f.tree, line, f.env)
		}
		if code != 0 || out != want {
			t.Errorf("served %v: exit %d, output:\n%s\nwant:\n%s", served, code, out, want)
		}
		b.Close()
		for _, n := range []string{"sitecustomize.py", "installed.py"} {
			if _, err := os.Stat(filepath.Join(std, n)); err == nil {
				t.Errorf("served %v: %s was made in the host's folder", served, n)
			}
		}
	}
}
