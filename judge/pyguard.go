package judge

import (
	"bytes"
	"crypto/sha256"
	_ "embed" // the engine's sitecustomize
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/sandbox"
	"github.com/looprinter/looprinter/tells"
)

// Python checks resolve the standard library's names from the standard
// library, by construction. A new difflib.py at the top of the project
// would otherwise be imported instead of the real one wherever the project
// comes first on Python's path (pytest's rootdir, the script's folder,
// `python -m`'s current folder), and unittest imports difflib, argparse,
// fnmatch, pprint … lazily, after the project's code: the shadow loads the
// real module, then replaces the deliverable's function. The guard's
// static rule (a new module named like one is a runner file, set aside in
// the clean room) is the first layer; this is the second, in every check
// of the judge's box (the gates, the clean room, the holdout checks, the
// strength mutants): the engine's sitecustomize.py, first on PYTHONPATH in
// a read-only folder of the engine's, puts a finder at the front of
// sys.meta_path that looks a top-level name of sys.stdlib_module_names up
// only in the standard library's folders, and the name of an installed
// distribution's top-level module that a test file of the loop's start
// imports (or a test runner's: pytest, pluggy …) only in site-packages;
// other installed names are left alone, so that a new tests/ or utils/
// of the project is not taken for a sloppy distribution's. The project's own
// top-level modules the loop started with are left to Python's order
// (LOOPRINTER_PY_OWN). Under bubblewrap it is also laid over each
// Python's own sitecustomize (pyguard_lay.go), which reaches a check that
// sets PYTHONPATH itself or runs Python with -E or -I; under Landlock and
// off PYTHONPATH is the only way in, and such a check runs without it.
// Python before 3.10 has no list of the standard library's names, and
// runs without it too.

//go:embed pyguard/sitecustomize.py
var pyGuardSource []byte

// pyGuardEnvOwn names the environment variable that lists the project's
// own top-level modules for the engine's sitecustomize.
const pyGuardEnvOwn = "LOOPRINTER_PY_OWN"

// pyGuardEnvDist names the one that lists the modules the loop's test
// files import: an installed distribution's among them, and a test
// runner's, are looked up only in site-packages.
const pyGuardEnvDist = "LOOPRINTER_PY_DIST"

// maxPyOwn bounds the names passed in LOOPRINTER_PY_OWN.
const maxPyOwn = 2000

var pyGuardOnce struct {
	sync.Mutex
	root, dir string
}

// pyGuardDir is the read-only folder holding the engine's sitecustomize.py
// in the engine's state folder (which agents and checks do not see; the
// checks' box shows this folder read-only), written once per content: ""
// when it cannot be written.
func pyGuardDir() string {
	root := loopdir.StateRoot()
	m := &pyGuardOnce
	m.Lock()
	defer m.Unlock()
	if m.root == root && m.dir != "" {
		return m.dir
	}
	sum := sha256.Sum256(pyGuardSource)
	dir := filepath.Join(root, "python-guard", hex.EncodeToString(sum[:])[:16])
	file := filepath.Join(dir, "sitecustomize.py")
	if data, err := os.ReadFile(file); err != nil || !bytes.Equal(data, pyGuardSource) {
		if err := writeReadOnly(dir, file, pyGuardSource); err != nil {
			return ""
		}
	}
	m.root, m.dir = root, dir
	return dir
}

// writeReadOnly writes data to file in dir (made if missing) through a
// temporary file renamed into place. Like everything in the state folder
// it is private to the engine's user (folders 0700, the file 0600; the
// checks run as that user and see it through a read-only bind).
func writeReadOnly(dir, file string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for d := dir; d != filepath.Dir(filepath.Dir(dir)); d = filepath.Dir(d) {
		os.Chmod(d, 0o700)
	}
	tmp, err := os.CreateTemp(dir, ".sitecustomize-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// GuardEnv is what the engine adds to a check's environment, given the
// loop's folder, the top-level names it held at the loop's start and the
// runner files it started with: Node checks
// load the engine's preload first (the assertion modules frozen, where
// the node on PATH takes it), Python checks the engine's sitecustomize
// (standard-library names from the standard library, installed
// distributions' from site-packages).
func GuardEnv(dir string, startTop, startFiles []string) []string {
	var env []string
	if o := sandbox.CheckNodeOptions(os.Getenv("NODE_OPTIONS")); o != "" {
		env = append(env, "NODE_OPTIONS="+o)
	}
	return append(env, pythonEnv(startTop, pyTestImports(dir, startFiles))...)
}

// maxPyImportReads bounds the test files read for the modules they import.
const maxPyImportReads = 2000

// pyTestImports are the top-level modules the Python test files the loop
// started with import ("*" when there are too many files to read): the
// installed distributions among them are the ones the engine's finder
// looks up only in site-packages. Those files are protected: as they are
// now, they were at the start.
func pyTestImports(dir string, startFiles []string) []string {
	key := dir + "\x00" + strings.Join(startFiles, "\x00")
	m := &pyImportsMemo
	m.Lock()
	defer m.Unlock()
	if m.key != key || m.imports == nil {
		m.key, m.imports = key, readTestImports(dir, startFiles)
	}
	return m.imports
}

// pyImportsMemo keeps the last answer of pyTestImports: every check asks.
var pyImportsMemo struct {
	sync.Mutex
	key     string
	imports []string
}

// readTestImports reads what pyTestImports answers.
func readTestImports(dir string, startFiles []string) []string {
	out := []string{}
	seen := map[string]bool{}
	n := 0
	for _, f := range startFiles {
		if tells.Language(f) != "python" || !tells.IsTestFile(f) {
			continue
		}
		if n++; n > maxPyImportReads {
			return []string{"*"}
		}
		src, err := guard.ReadBounded(filepath.Join(dir, filepath.FromSlash(f)), 1<<20)
		if err != nil {
			continue
		}
		mods, _ := tells.Imports(f, src)
		for _, m := range mods {
			if top, _, _ := strings.Cut(m, "."); top != "" && !seen[top] && len(out) < maxPyOwn {
				seen[top] = true
				out = append(out, top)
			}
		}
	}
	return out
}

// pythonEnv is what Python checks get in their environment: PYTHONPATH
// with the engine's folder first (the caller's after it) and the
// project's own top-level module names; nothing when the folder cannot be
// written.
func pythonEnv(startTop, testImports []string) []string {
	dir := pyGuardDir()
	if dir == "" {
		return nil
	}
	path := dir
	if cur := os.Getenv("PYTHONPATH"); cur != "" {
		path += string(os.PathListSeparator) + cur
	}
	var own []string
	for _, n := range startTop {
		if n = pyModuleName(n); n != "" && len(own) < maxPyOwn {
			own = append(own, n)
		}
	}
	return []string{"PYTHONPATH=" + path, pyGuardEnvOwn + "=" + strings.Join(own, ","), pyGuardEnvDist + "=" + strings.Join(testImports, ",")}
}

// pyModuleName is the top-level module a folder entry named n would be
// imported as (calc.py, calc/, calc.cpython-311-x86_64-linux-gnu.so:
// calc), "" for one that is none (README.md).
func pyModuleName(n string) string {
	name, ext, dotted := strings.Cut(n, ".")
	if name == "" || strings.ContainsAny(name, "-, ") {
		return ""
	}
	if dotted && !strings.HasSuffix(ext, "py") && !strings.HasSuffix(ext, ".so") && ext != "so" && ext != "pyd" && ext != "pyc" {
		return ""
	}
	return name
}
