package judge

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/sandbox"
)

// The engine's sitecustomize laid over each Python's own (bubblewrap).
// On PYTHONPATH it reaches only the checks that leave PYTHONPATH alone
// and run Python without -E and -I: a check such as `PYTHONPATH=src
// python -m pytest` would run without it. Python's site module imports
// sitecustomize from the standard library's folder whatever PYTHONPATH
// holds, and under -E and -I too (only -S skips it): in a bubblewrap box
// the engine's copy is laid there, read-only, for every Python 3.10+ the
// checks' PATH names (python, python3, python3.N), carrying the content of
// the interpreter's own sitecustomize, which it runs once the finder is
// in place. Under Landlock and with the sandbox off no file can be laid:
// there PYTHONPATH is the only way in.

// pyNames are the names of Python programs looked for on PATH.
var pyNames = regexp.MustCompile(`^python(3(\.[0-9]+)?)?$`)

// pyProbeTimeout bounds one interpreter's answer (a version manager's
// shim takes a second or more on a busy machine).
const pyProbeTimeout = 30 * time.Second

// pyProbe asks an interpreter its version and its standard library's
// folder, without site (-S) and isolated (-I): nothing of the project or
// the environment is imported.
const pyProbe = `import sys, sysconfig; print("%d.%d" % sys.version_info[:2]); print(sysconfig.get_path("stdlib"))`

// pyStdlibMemo keeps the folders found for each PATH and folder: every
// box asks, and a loop's boxes alternate between folders (the loop's, the
// clean room's copy, each mutant worker's), so one entry is not enough.
// Bounded: past pyStdlibMemoMax entries it starts again.
var pyStdlibMemo struct {
	sync.Mutex
	dirs map[string][]string
}

const pyStdlibMemoMax = 256

// pyGuardOver are the files a bubblewrap box lays for Python checks run
// with env in dir: the engine's sitecustomize over each Python's own, and
// its encodings/__init__.py with the engine's finder at its end, which
// runs under -S too (pyguard_encodings.go).
func pyGuardOver(env []string, dir string) []sandbox.OverFile {
	if pyGuardDir() == "" {
		return nil
	}
	var out []sandbox.OverFile
	for _, std := range pyStdlibDirsEnv(env, dir) {
		to := filepath.Join(std, "sitecustomize.py")
		if from := pyLaidFile(to); from != "" {
			out = append(out, sandbox.OverFile{From: from, To: to})
			out = append(out, pyUncheckedPycs(to)...)
		}
		out = append(out, pyEarlyOver(std)...)
	}
	return out
}

// envValue is key's last value in env.
func envValue(env []string, key string) string {
	v, _ := envLookup(env, key)
	return v
}

// pyStdlibDirs are the standard library's folders of the Pythons 3.10+
// that path names, for a check run in dir.
func pyStdlibDirs(path, dir string) []string {
	return pyStdlibDirsEnv([]string{"PATH=" + path}, dir)
}

// pyStdlibDirsEnv are the standard library's folders of the Pythons 3.10+
// that env's PATH names, for a check run with env in dir: read from the
// file system where they can be (pyguard_static.go), read again for every
// box; the rest asked of the interpreters once per PATH and dir (a
// version manager's shim picks the interpreter by the folder).
func pyStdlibDirsEnv(env []string, dir string) []string {
	path := envValue(env, "PATH")
	dirs := []string{}
	have := map[string]bool{}
	add := func(d string) {
		if d != "" && !have[d] {
			have[d] = true
			dirs = append(dirs, d)
		}
	}
	var ask []pyProgram
	for _, pr := range pyPrograms(path) {
		found, ok := pyStaticStdlib(pr.path, pr.real, env, dir)
		if !ok {
			ask = append(ask, pr)
			continue
		}
		for _, d := range found {
			add(d)
		}
	}
	for _, d := range pyAsked(path, dir, ask) {
		add(d)
	}
	return dirs
}

// A pyProgram is a Python program found on PATH: its path there and the
// file it leads to.
type pyProgram struct{ path, real string }

// pyProgramsMemo keeps the Pythons found for each PATH.
var pyProgramsMemo struct {
	sync.Mutex
	progs map[string][]pyProgram
}

// pyPrograms are the Python programs path names (python, python3,
// python3.N), one a file they lead to, in PATH's order.
func pyPrograms(path string) []pyProgram {
	m := &pyProgramsMemo
	m.Lock()
	defer m.Unlock()
	if progs, ok := m.progs[path]; ok {
		return progs
	}
	var progs []pyProgram
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(path) {
		entries, err := os.ReadDir(d)
		if !filepath.IsAbs(d) || err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if !pyNames.MatchString(e.Name()) {
				continue
			}
			r, err := filepath.EvalSymlinks(p)
			if err != nil || seen[r] {
				continue
			}
			if fi, err := os.Stat(r); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
				continue
			}
			// A version manager's shim for python3.N (a script) answers
			// only when that version is selected, slowly otherwise: python
			// and python3 name the selected one.
			if strings.Contains(e.Name(), ".") && isScript(r) {
				continue
			}
			seen[r] = true
			progs = append(progs, pyProgram{path: p, real: r})
		}
	}
	if m.progs == nil || len(m.progs) >= pyStdlibMemoMax {
		m.progs = map[string][]pyProgram{}
	}
	m.progs[path] = progs
	return progs
}

// pyAsked are the standard library's folders of the Pythons progs (found
// on path) as they answer when run in dir, asked once per path and dir.
func pyAsked(path, dir string, progs []pyProgram) []string {
	if len(progs) == 0 {
		return nil
	}
	m := &pyStdlibMemo
	m.Lock()
	defer m.Unlock()
	key := path + "\x00" + dir
	if dirs, ok := m.dirs[key]; ok {
		return dirs
	}
	answers := make([]string, len(progs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for i, p := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			answers[i] = probeStdlib(p.path, dir)
		}()
	}
	wg.Wait()
	var dirs []string
	for _, a := range answers {
		if a != "" {
			dirs = append(dirs, a)
		}
	}
	if m.dirs == nil || len(m.dirs) >= pyStdlibMemoMax {
		m.dirs = map[string][]string{}
	}
	m.dirs[key] = dirs
	return dirs
}

// isScript says whether the file at p starts with #!.
func isScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 2)
	n, _ := f.Read(b)
	return n == 2 && string(b) == "#!"
}

// probeStdlib is the standard library's folder of the Python prog (run in
// dir), "" for one before 3.10 (no list of the standard library's names:
// the finder does nothing there) or one that does not answer.
func probeStdlib(prog, dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), pyProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "-I", "-S", "-c", pyProbe)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	ver, std, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	major, minor, _ := strings.Cut(ver, ".")
	if n, err := strconv.Atoi(minor); major != "3" || err != nil || n < 10 {
		return ""
	}
	if std = strings.TrimSpace(std); !filepath.IsAbs(std) {
		return ""
	}
	if fi, err := os.Stat(std); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(std)
}

// pyLaidFile is the file laid at to (the standard library's
// sitecustomize.py): the engine's sitecustomize carrying the content of
// the one there, if any, written once per content in the engine's folder;
// "" when it cannot be written.
func pyLaidFile(to string) string {
	data := pyGuardSource
	// The standard library's own is often a link (Debian's leads to
	// /etc/python3.N/sitecustomize.py).
	real, err := filepath.EvalSymlinks(to)
	if err != nil {
		real = to
	}
	if own, err := guard.ReadBounded(real, 1<<20); err == nil {
		chained := []byte("CHAINED = (bytes.fromhex(\"" + hex.EncodeToString([]byte(to)) + "\").decode(\"utf-8\", \"surrogateescape\"), bytes.fromhex(\"" + hex.EncodeToString(own) + "\"))\n")
		data = bytes.Replace(pyGuardSource, []byte("CHAINED = None\n"), chained, 1)
	}
	return pyEngineFile("laid-", ".py", data)
}
