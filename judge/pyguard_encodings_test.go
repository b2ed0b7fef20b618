package judge

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The file laid over encodings/__init__.py is the standard library's own,
// unchanged, then a tail that runs the engine's sitecustomize with EARLY
// set; nothing is laid where EARLY is not found.
func TestPyEarlyContent(t *testing.T) {
	own := []byte("# -*- coding: utf-8 -*-\nimport codecs\nX = 1") // no newline at the end
	data := pyEarlyContent(own)
	if !bytes.HasPrefix(data, append(own, '\n')) {
		t.Fatalf("the original content is not kept: %q", data[:min(len(data), 80)])
	}
	if bytes.Count(data, []byte(pyEarlyMark)) != 1 {
		t.Fatal("no tail")
	}
	m := regexp.MustCompile(`bytes\.fromhex\("([0-9a-f]+)"\)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no guard in the tail: %s", data[len(own):])
	}
	src, err := hex.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Replace(pyGuardSource, []byte("\nEARLY = False\n"), []byte("\nEARLY = True\n"), 1); !bytes.Equal(src, want) || bytes.Equal(src, pyGuardSource) {
		t.Fatal("the tail does not carry the engine's sitecustomize with EARLY set")
	}
	if pyEarlyContent(nil) != nil {
		t.Fatal("a tail without the original")
	}
	old := pyGuardSource
	defer func() { pyGuardSource = old }()
	pyGuardSource = []byte("import sys\n")
	if pyEarlyContent(own) != nil {
		t.Fatal("laid although the guard has no EARLY")
	}
}

// A compiled copy Python takes without reading the source (an unchecked
// hash-based .pyc) gets an empty file laid over it; a checked one and a
// timestamp one are left alone.
func TestPyUncheckedPycs(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "encodings")
	cache := filepath.Join(dir, "__pycache__")
	os.MkdirAll(cache, 0o755)
	for name, flags := range map[string]byte{"__init__.cpython-311.pyc": 1, "__init__.cpython-311.opt-1.pyc": 3, "__init__.cpython-311.opt-2.pyc": 0, "aliases.cpython-311.pyc": 1} {
		os.WriteFile(filepath.Join(cache, name), []byte{0xa7, 0x0d, 0x0d, 0x0a, flags, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, 0o644)
	}
	got := pyUncheckedPycs(filepath.Join(dir, "__init__.py"))
	if len(got) != 1 || got[0].To != filepath.Join(cache, "__init__.cpython-311.pyc") {
		t.Fatalf("laid %+v", got)
	}
	if fi, err := os.Stat(got[0].From); err != nil || fi.Size() != 0 {
		t.Fatalf("%v %v", fi, err)
	}
}

// pyFakeHome is a folder for PYTHONHOME that is the Python's own, made of
// links to the standard library's folder std, with encodings/__init__.py
// holding enc and sitecustomize.py site (the original when nil).
func pyFakeHome(t *testing.T, std string, enc, site []byte) string {
	home := t.TempDir()
	lib := filepath.Join(home, "lib", filepath.Base(std))
	mirror := func(from, to string, skip ...string) {
		os.MkdirAll(to, 0o755)
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.Contains(" "+strings.Join(skip, " ")+" ", " "+e.Name()+" ") {
				if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	mirror(std, lib, "encodings", "sitecustomize.py", "__pycache__")
	mirror(filepath.Join(std, "encodings"), filepath.Join(lib, "encodings"), "__pycache__", "__init__.py")
	for name, data := range map[string][]byte{"encodings/__init__.py": enc, "sitecustomize.py": site} {
		to := filepath.Join(lib, filepath.FromSlash(name))
		if data != nil {
			if err := os.WriteFile(to, data, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if _, err := os.Lstat(filepath.Join(std, filepath.FromSlash(name))); err == nil {
			os.Symlink(filepath.Join(std, filepath.FromSlash(name)), to)
		}
	}
	return home
}

// pyTestPythons are the Pythons 3.10+ on PATH (the interpreters, not a
// version manager's shims), with their standard library's folders.
func pyTestPythons(t *testing.T) (progs, stds []string) {
	seen := map[string]bool{}
	for _, name := range []string{"python3", "python3.10", "python3.11", "python3.12", "python3.13", "python3.14"} {
		prog, err := exec.LookPath(name)
		if err != nil || (name != "python3" && isScript(prog)) {
			continue
		}
		out, err := exec.Command(prog, "-I", "-S", "-c", "import sys; print(sys.executable)").Output()
		if exe := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(exe) && !seen[exe] {
			seen[exe] = true
			if std := probeStdlib(exe, t.TempDir()); std != "" {
				progs, stds = append(progs, exe), append(stds, std)
			}
		}
	}
	if len(progs) == 0 {
		t.Skip("no python 3.10+ on PATH")
	}
	return progs, stds
}

// Python started with the laid encodings: under -S (no site, no
// sitecustomize) a module of the current folder named like the standard
// library's is not imported, the original encodings ran and left nothing
// of the tail's; with site, the finder installed early is replaced by the
// whole one, once, whether the engine's sitecustomize comes from
// PYTHONPATH or from the standard library's folder. Each Python 3.10+
// on PATH, started with PYTHONHOME at a copy of its standard library's
// folder made of links, encodings/__init__.py and sitecustomize.py the
// files the box lays.
func TestPyEarlyEncodings(t *testing.T) {
	t.Setenv("LOOPRINTER_STATE_DIR", t.TempDir())
	guardDir := pyGuardDir()
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "unittest.py"), []byte("SHADOW = True\n"), 0o644)
	probe := "import sys, unittest, encodings\n" +
		"f = [f for f in sys.meta_path if getattr(f, '__name__', '') == 'LooprinterStdlibFirst']\n" +
		"print('shadow' if hasattr(unittest, 'SHADOW') else 'stdlib', [x.early for x in f], " +
		"hasattr(encodings, 'search_function'), [n for n in vars(encodings) if 'looprinter' in n])\n"
	progs, stds := pyTestPythons(t)
	for i, prog := range progs {
		std := stds[i]
		t.Run(filepath.Base(std), func(t *testing.T) {
			over := pyEarlyOver(std)
			if len(over) == 0 || over[0].To != filepath.Join(std, "encodings", "__init__.py") {
				t.Fatalf("laid %+v", over)
			}
			laid, err := os.ReadFile(over[0].From)
			own, _ := os.ReadFile(over[0].To)
			if err != nil || !bytes.HasPrefix(laid, own) || !bytes.Equal(laid, pyEarlyContent(own)) {
				t.Fatalf("the laid file: %v", err)
			}
			site, err := os.ReadFile(pyLaidFile(filepath.Join(std, "sitecustomize.py")))
			if err != nil {
				t.Fatal(err)
			}
			run := func(home string, args ...string) string {
				cmd := exec.Command(prog, append(args, "-c", probe)...)
				cmd.Dir = proj
				cmd.Env = append(os.Environ(), "PYTHONHOME="+home, "PYTHONDONTWRITEBYTECODE=1", pyGuardEnvOwn+"=", pyGuardEnvDist+"=")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %q: %v: %s", prog, args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			// As Python is: the test would prove nothing otherwise.
			if got := run(pyFakeHome(t, std, nil, site), "-S"); got != "shadow [] True []" {
				t.Fatalf("without the laid file: %q", got)
			}
			home := pyFakeHome(t, std, laid, site)
			if got := run(home, "-S"); got != "stdlib [True] True []" {
				t.Fatalf("-S: %q", got)
			}
			if got := run(home); got != "stdlib [False] True []" {
				t.Fatalf("with site: %q", got)
			}
			// A folder of PYTHONPATH's comes before the standard library's:
			// while the tail runs (it imports os, not frozen in 3.10) the
			// path holds only the standard library's folders, then all.
			shadow := t.TempDir()
			os.WriteFile(filepath.Join(shadow, "os.py"), []byte("SHADOW = True\n"), 0o644)
			cmd := exec.Command(prog, "-S", "-c", "import os, sys; print(hasattr(os, 'SHADOW'), sys.path.count(sys.argv[1]))", shadow)
			cmd.Env = append(os.Environ(), "PYTHONHOME="+home, "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+shadow)
			if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "False 1" {
				t.Fatalf("an os.py on PYTHONPATH: %v: %s", err, out)
			}
			t.Setenv("PYTHONPATH", guardDir)
			if got := run(home); got != "stdlib [False] True []" {
				t.Fatalf("with the engine's sitecustomize on PYTHONPATH: %q", got)
			}
		})
	}
}

// A tail that fails leaves Python as it was: it starts, says so on
// stderr, and the encodings package is whole.
func TestPyEarlyFailsOpen(t *testing.T) {
	progs, stds := pyTestPythons(t)
	old := pyGuardSource
	defer func() { pyGuardSource = old }()
	pyGuardSource = []byte("import sys\nEARLY = False\nraise RuntimeError('broken guard')\n")
	own, err := os.ReadFile(filepath.Join(stds[0], "encodings", "__init__.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(progs[0], "-S", "-c", "import encodings; print(hasattr(encodings, 'search_function'), 'é'.encode('latin-1'))")
	cmd.Env = append(os.Environ(), "PYTHONHOME="+pyFakeHome(t, stds[0], pyEarlyContent(own), nil))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "looprinter: the engine's guard did not start with Python: RuntimeError('broken guard')") || !strings.HasSuffix(strings.TrimSpace(string(out)), `True b'\xe9'`) {
		t.Fatalf("%v: %s", err, out)
	}
}
