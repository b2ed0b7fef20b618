package judge

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/guard"
)

// Asking an interpreter for its standard library's folder costs a process
// start, and through a version manager's shim (pyenv's: a bash script that
// runs pyenv) about half a second of CPU each. Most answers can be read
// from the file system instead, the way Python's own start finds its
// standard library: pyStaticStdlib reads them, and says when it cannot
// (then the interpreter is asked, as before).
//
//   - A program (not a script) whose folder or the one above holds no
//     pyvenv.cfg: the folder of its real path and each one above it are
//     tried for lib/pythonX.Y/os.py (lib64 too), X.Y from its name
//     (python3.11); Python's start looks for that landmark the same way.
//   - pyenv's shim: the versions pyenv selects for a check run in dir,
//     read as pyenv reads them (PYENV_VERSION, else .python-version in dir
//     or a folder above, else PYENV_ROOT/version), each an installed
//     version's folder under PYENV_ROOT/versions. They are read again for
//     every box, so a .python-version the agent writes mid-loop is the one
//     the guard follows. "system" names the next Python on PATH, which is
//     read in its own right.
//
// Anything else (a virtual environment, a version named by a prefix or
// an alias, another manager's shim) is left to the interpreter's answer.

// pyStaticStdlib is the standard library's folders of the Python at p
// (real its resolved path) for a check run with env in dir, 3.10+ only,
// and whether they could be read without running it.
func pyStaticStdlib(p, real string, env []string, dir string) ([]string, bool) {
	if isScript(real) {
		root := pyenvShimRoot(real)
		if root == "" {
			return nil, false
		}
		return pyenvSelected(root, env, dir)
	}
	for _, d := range []string{filepath.Dir(p), filepath.Dir(filepath.Dir(p)), filepath.Dir(real), filepath.Dir(filepath.Dir(real))} {
		if _, err := os.Lstat(filepath.Join(d, "pyvenv.cfg")); err == nil {
			return nil, false
		}
	}
	std, ok := pyLandmark(real)
	if !ok {
		return nil, false
	}
	if std == "" {
		return []string{}, true
	}
	return []string{std}, true
}

// pyVersioned matches an interpreter's name that carries its version.
var pyVersioned = regexp.MustCompile(`^python(3)\.([0-9]+)$`)

// pyLandmark is the standard library's folder of the interpreter at real
// (a resolved path) found by its landmark, "" with true for one before
// 3.10, false where the name carries no version or no landmark is found.
func pyLandmark(real string) (string, bool) {
	m := pyVersioned.FindStringSubmatch(filepath.Base(real))
	if m == nil {
		return "", false
	}
	minor, err := strconv.Atoi(m[2])
	if err != nil {
		return "", false
	}
	sub := "python3." + m[2]
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		for _, lib := range []string{"lib", "lib64"} {
			std := filepath.Join(d, lib, sub)
			if regular(filepath.Join(std, "os.py")) {
				if minor < 10 {
					return "", true
				}
				return std, true
			}
		}
		if d == filepath.Dir(d) {
			return "", false
		}
	}
}

// regular says whether p is a regular file (links followed).
func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// pyenvRootLine is the line of pyenv's shim that names its root.
var pyenvRootLine = regexp.MustCompile(`(?m)^export PYENV_ROOT="([^"$` + "`" + `\\]+)"$`)

// pyenvShimRoot is the PYENV_ROOT of pyenv's shim at real, "" for any
// other script: a file in a folder named shims that runs
// PYENV_ROOT/libexec/pyenv exec.
func pyenvShimRoot(real string) string {
	if filepath.Base(filepath.Dir(real)) != "shims" {
		return ""
	}
	data, err := guard.ReadBounded(real, 64<<10)
	if err != nil {
		return ""
	}
	m := pyenvRootLine.FindSubmatch(data)
	if m == nil {
		return ""
	}
	root := filepath.Clean(string(m[1]))
	if !filepath.IsAbs(root) || !bytes.Contains(data, []byte(`exec "`+root+`/libexec/pyenv" exec `)) {
		return ""
	}
	return root
}

// pyenvSelected is the standard library's folders of the versions pyenv
// selects under root for a check run with env in dir, false where one of
// them cannot be read from the file system.
func pyenvSelected(root string, env []string, dir string) ([]string, bool) {
	if envValue(env, "PYENV_DIR") != "" {
		return nil, false
	}
	var names []string
	if v, ok := envLookup(env, "PYENV_VERSION"); ok {
		names = strings.FieldsFunc(v, func(r rune) bool { return r == ':' })
	} else {
		file := ""
		for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
			if p := filepath.Join(d, ".python-version"); regular(p) {
				file = p
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if file == "" {
			file = filepath.Join(root, "version")
		}
		data, err := guard.ReadBounded(file, 64<<10)
		if err != nil && !os.IsNotExist(err) {
			return nil, false
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				names = append(names, line)
			}
		}
	}
	if len(names) == 0 {
		names = []string{"system"}
	}
	dirs := []string{}
	for _, n := range names {
		if n == "system" {
			continue
		}
		if strings.ContainsAny(n, "/ \t") || n == "." || n == ".." {
			return nil, false
		}
		prefix, err := filepath.EvalSymlinks(filepath.Join(root, "versions", n))
		if err != nil {
			return nil, false
		}
		if _, err := os.Lstat(filepath.Join(prefix, "pyvenv.cfg")); err == nil {
			return nil, false
		}
		matches, _ := filepath.Glob(filepath.Join(prefix, "bin", "python3.*"))
		found := false
		for _, m := range matches {
			if !pyVersioned.MatchString(filepath.Base(m)) {
				continue
			}
			r, err := filepath.EvalSymlinks(m)
			if err != nil {
				return nil, false
			}
			std, ok := pyLandmark(r)
			if !ok || std != "" && filepath.Dir(filepath.Dir(std)) != prefix {
				return nil, false
			}
			found = true
			if std != "" {
				dirs = append(dirs, std)
			}
		}
		if !found {
			return nil, false
		}
	}
	return dirs, true
}

// envLookup is key's last value in env, and whether it is there.
func envLookup(env []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true
		}
	}
	return v, ok
}
