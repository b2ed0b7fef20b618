package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestPyModuleName(t *testing.T) {
	for n, want := range map[string]string{"calc.py": "calc", "calendar": "calendar", "fast.cpython-311-x86_64-linux-gnu.so": "fast",
		"README.md": "", "my-tool": "", ".git": "", "go.mod": "", "x.pyc": "x", "w.pyd": "w", "m.so": "m"} {
		if got := pyModuleName(n); got != want {
			t.Errorf("pyModuleName(%q) = %q, want %q", n, got, want)
		}
	}
}

// The engine's sitecustomize, run by the Python on PATH: a standard-library
// name comes from the standard library although the script's folder holds
// a module of that name, unless the project started with it; other
// siblings import as before; a sitecustomize of the project's later on
// PYTHONPATH does not displace the engine's.
func TestPyGuardSitecustomize(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here")
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := pyGuardDir()
	if dir == "" {
		t.Fatal("the engine's folder was not written")
	}
	if fi, err := os.Stat(filepath.Join(dir, "sitecustomize.py")); err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("sitecustomize.py: %v %v", fi, err)
	}
	if again := pyGuardDir(); again != dir {
		t.Fatalf("a second call moved the folder: %s, %s", dir, again)
	}
	proj := t.TempDir()
	own := filepath.Join(proj, "own")
	os.Mkdir(own, 0o755)
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, "difflib.py"), "SHADOW = True\n")
	write(filepath.Join(proj, "helper.py"), "X = 1\n")
	write(filepath.Join(own, "sitecustomize.py"), "import sys\nsys.meta_path[:] = [f for f in sys.meta_path if 'Looprinter' not in repr(f)]\n")
	write(filepath.Join(proj, "app.py"), "import difflib, helper\nprint('shadow' if hasattr(difflib, 'SHADOW') else 'stdlib', helper.X)\n")
	run := func(env ...string) string {
		cmd := exec.Command("python3", "app.py")
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	env := pythonEnv(nil)
	if len(env) != 2 || !strings.HasPrefix(env[0], "PYTHONPATH="+dir) {
		t.Fatalf("env %q", env)
	}
	if got := run(); got != "shadow 1" {
		t.Fatalf("without the engine's sitecustomize the shadow should load (the test would prove nothing): %q", got)
	}
	if got := run(env[0]+string(os.PathListSeparator)+own, env[1]); got != "stdlib 1" {
		t.Fatalf("with it: %q", got)
	}
	env = pythonEnv([]string{"difflib.py", "README.md"})
	if env[1] != pyGuardEnvOwn+"=difflib" {
		t.Fatalf("own names: %q", env[1])
	}
	if got := run(env...); got != "shadow 1" {
		t.Fatalf("the project's own difflib.py at the start is its own: %q", got)
	}
}
