package guard

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/looprinter/looprinter/tells"
)

// pythonStdlib are the standard library's top-level modules (Python
// 3.10+'s sys.stdlib_module_names, with the few 3.12 and 3.13 removed):
// a new module of the project named like one would be imported instead of
// it where the project comes first on Python's path (pytest puts the
// test files' root folders first; unittest imports difflib, argparse,
// fnmatch, pprint … lazily).
var pythonStdlib = map[string]bool{}

func init() {
	for _, n := range []string{
		"__future__", "_abc", "_aix_support", "_ast", "_asyncio", "_bisect", "_blake2", "_bootsubprocess", "_bz2",
		"_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022", "_codecs_jp", "_codecs_kr", "_codecs_tw",
		"_collections", "_collections_abc", "_compat_pickle", "_compression", "_contextvars", "_crypt", "_csv",
		"_ctypes", "_curses", "_curses_panel", "_datetime", "_dbm", "_decimal", "_elementtree", "_frozen_importlib",
		"_frozen_importlib_external", "_functools", "_gdbm", "_hashlib", "_heapq", "_imp", "_io", "_json", "_locale",
		"_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec", "_multiprocessing", "_opcode",
		"_operator", "_osx_support", "_overlapped", "_pickle", "_posixshmem", "_posixsubprocess", "_py_abc",
		"_pydecimal", "_pyio", "_queue", "_random", "_scproxy", "_sha1", "_sha256", "_sha3", "_sha512", "_signal",
		"_sitebuiltins", "_socket", "_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime",
		"_struct", "_symtable", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing",
		"_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_zoneinfo", "abc", "aifc", "antigravity",
		"argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit", "audioop", "base64", "bdb",
		"binascii", "binhex", "bisect", "builtins", "bz2", "cProfile", "calendar", "cgi", "cgitb", "chunk", "cmath",
		"cmd", "code", "codecs", "codeop", "collections", "colorsys", "compileall", "concurrent", "configparser",
		"contextlib", "contextvars", "copy", "copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses",
		"datetime", "dbm", "decimal", "difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip",
		"enum", "errno", "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "formatter", "fractions",
		"ftplib", "functools", "gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp",
		"gzip", "hashlib", "heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib",
		"inspect", "io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale", "logging",
		"lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder", "msilib", "msvcrt",
		"multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path", "numbers", "opcode", "operator",
		"optparse", "os", "ossaudiodev", "parser", "pathlib", "pdb", "pickle", "pickletools", "pipes", "pkgutil",
		"platform", "plistlib", "poplib", "posix", "posixpath", "pprint", "profile", "pstats", "pty", "pwd",
		"py_compile", "pyclbr", "pydoc", "pydoc_data", "pyexpat", "queue", "quopri", "random", "re", "readline",
		"reprlib", "resource", "rlcompleter", "runpy", "sched", "secrets", "select", "selectors", "shelve", "shlex",
		"shutil", "signal", "site", "smtpd", "smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3",
		"sre_compile", "sre_constants", "sre_parse", "ssl", "stat", "statistics", "string", "stringprep", "struct",
		"subprocess", "sunau", "symbol", "symtable", "sys", "sysconfig", "syslog", "tabnanny", "tarfile",
		"telnetlib", "tempfile", "termios", "textwrap", "this", "threading", "time", "timeit", "tkinter", "token",
		"tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle", "turtledemo", "types", "typing",
		"unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings", "wave", "weakref", "webbrowser",
		"winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp", "zipfile", "zipimport", "zlib",
		"zoneinfo",
	} {
		pythonStdlib[n] = true
	}
}

// pythonRunnerDeps are the modules the test runners themselves import
// (pytest's dependencies): a module named like one shadows the runner.
var pythonRunnerDeps = map[string]bool{"pytest": true, "_pytest": true, "pluggy": true, "iniconfig": true, "packaging": true,
	"py": true, "exceptiongroup": true, "tomli": true, "colorama": true, "pygments": true, "nose2": true, "hypothesis": true,
	"coverage": true, "xdist": true, "pytest_cov": true, "typing_extensions": true}

// maxShadowReads bounds the test files read for the modules they import.
const maxShadowReads = 2000

// pyShadowMemo keeps, for the last rules asked, the top-level names the
// loop's Python test files import (all: too many files to read) and the
// folders pytest puts on Python's path: one read per set of rules.
var pyShadowMemo struct {
	sync.Mutex
	r        *ProtectRules
	imported map[string]bool
	all      bool
	dirs     map[string]bool
	pkgs     map[string]bool // the folders holding an __init__.py at the start
}

// pyPackageAtStart says whether dir was a package of the project at the
// loop's start.
func (r *ProtectRules) pyPackageAtStart(dir string) bool {
	r.pyShadowFacts()
	m := &pyShadowMemo
	m.Lock()
	defer m.Unlock()
	return m.r == r && m.pkgs[dir]
}

// pyShadowFacts reads them for r, once.
func (r *ProtectRules) pyShadowFacts() (imported map[string]bool, all bool, dirs map[string]bool) {
	m := &pyShadowMemo
	m.Lock()
	defer m.Unlock()
	if m.r == r {
		return m.imported, m.all, m.dirs
	}
	imported, dirs = map[string]bool{}, map[string]bool{}
	pkgs := map[string]bool{}
	n := 0
	for _, f := range r.files {
		if path.Base(f) == "__init__.py" {
			pkgs[path.Dir(f)] = true
		}
		if tells.Language(f) != "python" || !tells.IsTestFile(f) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.dir, filepath.FromSlash(path.Dir(f)), "__init__.py")); err != nil {
			dirs[path.Dir(f)] = true
		}
		if n++; n > maxShadowReads {
			all = true
			continue
		}
		src, err := ReadBounded(filepath.Join(r.dir, filepath.FromSlash(f)), 1<<20)
		if err != nil {
			continue
		}
		mods, _ := tells.Imports(f, src)
		for _, mod := range mods {
			if top, _, _ := strings.Cut(mod, "."); top != "" {
				imported[top] = true
			}
		}
	}
	m.r, m.imported, m.all, m.dirs, m.pkgs = r, imported, all, dirs, pkgs
	return imported, all, dirs
}

// shadowsImported says whether a new module named name at the top of the
// folder or in a folder Python's path gets from pytest (dir: a folder of
// test files with no __init__.py) would be imported instead of a module
// the checks import: a standard-library module, a test runner's
// dependency, or an installed distribution a test file of the loop's start
// imports (a name not the project's own at the start).
func (r *ProtectRules) shadowsImported(dir, name string) bool {
	imported, all, dirs := r.pyShadowFacts()
	if dir != "" && !dirs[dir] {
		return false
	}
	return pythonStdlib[name] || pythonRunnerDeps[name] || (all || imported[name]) && (r.installedInVenv(name) || installedOnMachine(name))
}

// pythonSiteDirs are the machine's folders of installed distributions
// (globs): the system's, /usr/local's, the user's and pyenv's. A variable
// so that tests can point it elsewhere.
var pythonSiteDirs = func() []string {
	home, _ := os.UserHomeDir()
	dirs := []string{"/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages",
		"/usr/local/lib/python3*/site-packages"}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".local/lib/python3*/site-packages"), filepath.Join(home, ".pyenv/versions/*/lib/python3*/site-packages"))
	}
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		dirs = append(dirs, filepath.Join(root, "versions/*/lib/python3*/site-packages"))
	}
	return dirs
}

// installedOnMachine says whether a distribution installed on the machine
// (outside the project) has a module of that name: a new module of the
// project named like it, which a test file imports, would be imported in
// its stead.
func installedOnMachine(name string) bool {
	for _, d := range pythonSiteDirs() {
		for _, pat := range []string{name, name + ".py", name + ".*.so"} {
			if m, _ := filepath.Glob(filepath.Join(d, pat)); len(m) > 0 {
				return true
			}
		}
	}
	return false
}

// installedInVenv says whether the project's virtual environment (.venv,
// venv, env) has a distribution's module of that name: a module of the
// project named like it would be imported in its stead. Distributions
// installed outside the project are found by installedOnMachine.
func (r *ProtectRules) installedInVenv(name string) bool {
	for _, v := range []string{".venv", "venv", "env"} {
		for _, pat := range []string{name, name + ".py", name + ".*.so"} {
			if m, _ := filepath.Glob(filepath.Join(r.dir, v, "lib", "python3*", "site-packages", pat)); len(m) > 0 {
				return true
			}
		}
	}
	return false
}
