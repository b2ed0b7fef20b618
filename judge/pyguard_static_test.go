package judge

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every interpreter of this machine whose standard library can be read
// from the file system reads as the interpreter itself answers: the
// Pythons on PATH and those of pyenv's versions.
func TestPyStaticStdlibAgreesWithTheInterpreter(t *testing.T) {
	var progs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		m, _ := filepath.Glob(filepath.Join(d, "python3*"))
		progs = append(progs, m...)
	}
	if home, err := os.UserHomeDir(); err == nil {
		m, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", "*", "bin", "python3*"))
		progs = append(progs, m...)
	}
	checked := 0
	for _, p := range progs {
		if !pyNames.MatchString(filepath.Base(p)) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || isScript(real) {
			continue
		}
		got, ok := pyStaticStdlib(p, real, os.Environ(), t.TempDir())
		if !ok {
			continue
		}
		want := probeStdlib(p, t.TempDir())
		if want == "" && len(got) == 0 {
			checked++
			continue
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: read %q, the interpreter answers %q", p, got, want)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no Python 3 interpreter here")
	}
	t.Logf("%d interpreters agree", checked)
}

// pyenv's shim: the versions pyenv selects are read as pyenv reads them,
// again for each box (a .python-version written mid-loop is followed),
// and anything pyenv would resolve further is left to the interpreter.
func TestPyenvShimSelected(t *testing.T) {
	root := t.TempDir()
	shims := filepath.Join(root, "shims")
	os.MkdirAll(shims, 0o755)
	shim := "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n\nexport PYENV_ROOT=\"" + root + "\"\nexec \"" + root + "/libexec/pyenv\" exec \"$program\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shims, "python3"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	version := func(name, minor string) string {
		prefix := filepath.Join(root, "versions", name)
		std := filepath.Join(prefix, "lib", "python3."+minor)
		os.MkdirAll(std, 0o755)
		os.MkdirAll(filepath.Join(prefix, "bin"), 0o755)
		os.WriteFile(filepath.Join(std, "os.py"), nil, 0o644)
		os.WriteFile(filepath.Join(prefix, "bin", "python3."+minor), []byte("\x7fELF"), 0o755)
		os.Symlink("python3."+minor, filepath.Join(prefix, "bin", "python3"))
		return std
	}
	std11, std12 := version("3.11.7", "11"), version("3.12.1", "12")
	version("3.9.1", "9")
	os.WriteFile(filepath.Join(root, "version"), []byte("3.11.7\n"), 0o644)
	p := filepath.Join(shims, "python3")
	if got := pyenvShimRoot(p); got != root {
		t.Fatalf("root %q, want %q", got, root)
	}
	read := func(env []string, dir string) ([]string, bool) {
		return pyStaticStdlib(p, p, env, dir)
	}
	work := t.TempDir()
	sub := filepath.Join(work, "a", "b")
	os.MkdirAll(sub, 0o755)
	check := func(what string, env []string, dir string, want ...string) {
		t.Helper()
		got, ok := read(env, dir)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", what, got, ok, want)
		}
	}
	check("global version", nil, sub, std11)
	os.WriteFile(filepath.Join(work, ".python-version"), []byte("# chosen\n3.12.1\n3.11.7\nsystem\n3.9.1\n"), 0o644)
	check(".python-version above, written mid-loop", nil, sub, std12, std11)
	check("PYENV_VERSION", []string{"PYENV_VERSION=3.11.7"}, sub, std11)
	for what, env := range map[string][]string{
		"a prefix pyenv resolves": {"PYENV_VERSION=3.12"},
		"a path":                  {"PYENV_VERSION=../3.12.1"},
		"PYENV_DIR":               {"PYENV_DIR=/", "PYENV_VERSION=3.11.7"},
	} {
		if got, ok := read(env, sub); ok {
			t.Errorf("%s: read %q, want the interpreter asked", what, got)
		}
	}
	venv := filepath.Join(root, "versions", "env1")
	version("env1", "11")
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	if got, ok := read([]string{"PYENV_VERSION=env1"}, sub); ok {
		t.Errorf("a virtual environment: read %q, want the interpreter asked", got)
	}
	// Another script in a shims folder is not pyenv's.
	other := filepath.Join(t.TempDir(), "shims", "python3")
	os.MkdirAll(filepath.Dir(other), 0o755)
	os.WriteFile(other, []byte(strings.ReplaceAll(shim, "libexec/pyenv", "libexec/other")), 0o755)
	if got := pyenvShimRoot(other); got != "" {
		t.Errorf("another manager's shim read as pyenv's at %q", got)
	}
}

// The shim of a PATH is never run when its versions can be read: the
// folders come from the file system (a shim that runs would leave a mark).
func TestPyStdlibDirsReadsPyenvWithoutRunningIt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	shims := filepath.Join(root, "shims")
	os.MkdirAll(shims, 0o755)
	mark := filepath.Join(t.TempDir(), "ran")
	shim := "#!/usr/bin/env bash\ntouch " + mark + "\nexport PYENV_ROOT=\"" + root + "\"\nexec \"" + root + "/libexec/pyenv\" exec \"$program\" \"$@\"\n"
	os.WriteFile(filepath.Join(shims, "python3"), []byte(shim), 0o755)
	os.WriteFile(filepath.Join(shims, "python"), []byte(shim), 0o755)
	std := filepath.Join(root, "versions", "3.13.0", "lib", "python3.13")
	os.MkdirAll(std, 0o755)
	os.MkdirAll(filepath.Join(root, "versions", "3.13.0", "bin"), 0o755)
	os.WriteFile(filepath.Join(std, "os.py"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "versions", "3.13.0", "bin", "python3.13"), []byte("\x7fELF"), 0o755)
	os.WriteFile(filepath.Join(root, "version"), []byte("3.13.0\n"), 0o644)
	got := pyStdlibDirs(shims, t.TempDir())
	if !slices.Equal(got, []string{std}) {
		t.Errorf("dirs %q, want [%s]", got, std)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the shim was run")
	}
}
