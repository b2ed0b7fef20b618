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
	if fi, err := os.Stat(filepath.Join(dir, "sitecustomize.py")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sitecustomize.py: %v %v", fi, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the guard's folder is not private: %v %v", fi, err)
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
	env := pythonEnv(nil, nil)
	if len(env) != 3 || !strings.HasPrefix(env[0], "PYTHONPATH="+dir) {
		t.Fatalf("env %q", env)
	}
	if got := run(); got != "shadow 1" {
		t.Fatalf("without the engine's sitecustomize the shadow should load (the test would prove nothing): %q", got)
	}
	if got := run(env[0]+string(os.PathListSeparator)+own, env[1], env[2]); got != "stdlib 1" {
		t.Fatalf("with it: %q", got)
	}
	env = pythonEnv([]string{"difflib.py", "README.md"}, nil)
	if env[1] != pyGuardEnvOwn+"=difflib" {
		t.Fatalf("own names: %q", env[1])
	}
	if got := run(env...); got != "shadow 1" {
		t.Fatalf("the project's own difflib.py at the start is its own: %q", got)
	}
}

// An installed distribution's name is looked up only in site-packages when
// a test file of the loop's start imports it, and left alone otherwise (a
// new package of the project named like a sloppy distribution's tests/).
func TestPyGuardDistributions(t *testing.T) {
	if err := exec.Command("python3", "-c", "import yaml").Run(); err != nil {
		t.Skip("no python3 with PyYAML here")
	}
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "yaml.py"), []byte("SHADOW = True\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "test_x.py"), []byte("import os\nimport yaml\nfrom calc import add\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "app.py"), []byte("import yaml\nprint('shadow' if hasattr(yaml, 'SHADOW') else 'installed')\n"), 0o644)
	imports := pyTestImports(proj, []string{"test_x.py", "app.py", "missing_test.py"})
	if strings.Join(imports, ",") != "os,yaml,calc" {
		t.Fatalf("imports of the start's test files: %q", imports)
	}
	run := func(env []string) string {
		cmd := exec.Command("python3", "app.py")
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(pythonEnv(nil, imports)); got != "installed" {
		t.Fatalf("a test file imports yaml: %q", got)
	}
	if got := run(pythonEnv(nil, []string{"*"})); got != "installed" {
		t.Fatalf("too many test files to read: %q", got)
	}
	if got := run(pythonEnv(nil, []string{"os"})); got != "shadow" {
		t.Fatalf("no test file imports yaml: the project's module is left alone: %q", got)
	}
}
