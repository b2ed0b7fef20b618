package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The file laid over a Python's own sitecustomize installs the engine's
// finder, then runs the content it hides; where there was none it is the
// engine's sitecustomize as it is.
func TestPyLaidFileChains(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here")
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	std := t.TempDir()
	if got := pyLaidFile(filepath.Join(std, "sitecustomize.py")); got == "" {
		t.Fatal("no file laid where there was no sitecustomize")
	} else if data, _ := os.ReadFile(got); string(data) != string(pyGuardSource) {
		t.Fatal("with nothing to carry the laid file is not the engine's sitecustomize")
	}
	orig := filepath.Join(std, "sitecustomize.py")
	if err := os.WriteFile(orig, []byte("import builtins\nbuiltins.ORIGINAL_RAN = __name__ + ' \\u00e9'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	laid := pyLaidFile(orig)
	if laid == "" || laid == pyLaidFile(filepath.Join(t.TempDir(), "sitecustomize.py")) {
		t.Fatalf("laid %q", laid)
	}
	if fi, err := os.Stat(laid); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the laid file: %v %v", fi, err)
	}
	// Where Python finds it: as sitecustomize, first on its path.
	at := filepath.Join(t.TempDir(), "sitecustomize.py")
	data, _ := os.ReadFile(laid)
	if err := os.WriteFile(at, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "-c", "import sys, builtins; print(any('Looprinter' in repr(f) for f in sys.meta_path), getattr(builtins, 'ORIGINAL_RAN', None))")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Dir(at))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "True sitecustomize \u00e9" {
		t.Fatalf("%v: %q", err, out)
	}
}

// A standard-library module Python imported from elsewhere before the
// engine's sitecustomize ran (a .pth file's import with PYTHONPATH=src)
// ends the check.
func TestPyGuardRefusesEarlyShadow(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here")
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := pyGuardDir()
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "colorsys.py"), []byte("SHADOW = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "sitecustomize.py")
	run := func(first string) (string, error) {
		cmd := exec.Command("python3", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); import "+first+"; p = sys.argv[2]; exec(compile(open(p).read(), p, 'exec'), {'__file__': p, '__name__': 'sitecustomize'}); print('ran')", proj, site)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("colorsys")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(out, "colorsys was imported from "+filepath.Join(proj, "colorsys.py")) {
		t.Fatalf("%v: %q", err, out)
	}
	if out, err := run("json"); err != nil || strings.TrimSpace(out) != "ran" {
		t.Fatalf("the standard library's own: %v: %q", err, out)
	}
}

// The Pythons a PATH names: each answers once with its standard
// library's folder; one before 3.10 and a version manager's shim for
// python3.N are left out.
func TestPyStdlibDirs(t *testing.T) {
	real, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 here")
	}
	bin := t.TempDir()
	if err := os.Symlink(real, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(t.TempDir(), "lib")
	os.Mkdir(old, 0o755)
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("python", "#!/bin/sh\nprintf '3.9\\n"+old+"\\n'\n")
	write("python3.99", "#!/bin/sh\nprintf '3.99\\n"+old+"\\n'\n")
	write("python3-config", "#!/bin/sh\nprintf '3.99\\n"+old+"\\n'\n")
	dirs := pyStdlibDirs(bin, t.TempDir())
	if len(dirs) != 1 {
		t.Fatalf("dirs %q", dirs)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "difflib.py")); err != nil {
		t.Fatalf("%s is not the standard library's folder: %v", dirs[0], err)
	}
}
