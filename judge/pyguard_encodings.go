package judge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/looprinter/looprinter/guard"
	"github.com/looprinter/looprinter/sandbox"
)

// The engine's finder from Python's first moment (bubblewrap). Python
// -S skips site, and with it every sitecustomize: the copy laid over the
// standard library's never runs. But every Python imports the standard
// library's encodings package at its start (-S, -E and -I alike), from
// the standard library's folder, before the folder of the script or the
// current folder is on sys.path; encodings is not frozen (3.10 to 3.13).
// In a bubblewrap box the engine lays, read-only, a copy of each Python's
// own encodings/__init__.py carrying its content unchanged and a tail
// that runs the engine's sitecustomize with EARLY set: the finder for the
// standard library's names is in place before any code of the project
// can run, and the first sitecustomize of the engine's to run later (site
// has then put site-packages on the path) replaces it with the whole one.
// Where the file cannot be made nothing is laid there, and Python starts
// as before (the sitecustomize alone, and -S unguarded).

// pyEarlyMark ends the content of the file laid over encodings/__init__.py.
const pyEarlyMark = "# looprinter: the engine's finder, from Python's start"

// pyEarlyTail is the tail added to encodings/__init__.py: {guard} is the
// engine's sitecustomize with EARLY set, in hex. While it runs, sys.path
// holds only the standard library's folders (a folder of PYTHONPATH's
// comes first otherwise, and Python 3.10's os is not frozen: the guard
// imports it). It leaves no name in encodings; an error in it leaves
// Python as it was (sys.stderr is not there yet: the note goes to the
// file descriptor).
const pyEarlyTail = "\n\n" + pyEarlyMark + " (-S too; judge/pyguard_encodings.go).\n" +
	"def _looprinter_early(src):\n" +
	"    import sys\n" +
	"    path = sys.path[:]\n" +
	"    std = __file__[:__file__.rfind(\"/encodings/\")] if isinstance(__file__, str) and \"/encodings/\" in __file__ else \"\"\n" +
	"    try:\n" +
	"        if std in path:\n" +
	"            sys.path[:] = [p for p in path if p == std or p.startswith(std + \"/\")]\n" +
	"        exec(compile(src, \"<looprinter guard>\", \"exec\"), {\"__name__\": \"_looprinter_guard\"})\n" +
	"    except Exception as e:\n" +
	"        try:\n" +
	"            import posix\n" +
	"            posix.write(2, (\"looprinter: the engine's guard did not start with Python: %r\\n\" % (e,)).encode(\"utf-8\", \"replace\"))\n" +
	"        except Exception:\n" +
	"            pass\n" +
	"    finally:\n" +
	"        sys.path[:] = path\n" +
	"\n" +
	"\n" +
	"_looprinter_early(bytes.fromhex(\"{guard}\"))\n" +
	"del _looprinter_early\n"

// pyEarlySource is the engine's sitecustomize as the tail runs it: ""
// if EARLY is not where it is expected.
func pyEarlySource() []byte {
	const off, on = "\nEARLY = False\n", "\nEARLY = True\n"
	if bytes.Count(pyGuardSource, []byte(off)) != 1 {
		return nil
	}
	return bytes.Replace(pyGuardSource, []byte(off), []byte(on), 1)
}

// pyEarlyContent is own (the standard library's encodings/__init__.py)
// with the tail; nil when there is nothing to lay.
func pyEarlyContent(own []byte) []byte {
	src := pyEarlySource()
	if src == nil || len(own) == 0 {
		return nil
	}
	data := append([]byte{}, own...)
	if data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	return append(data, strings.Replace(pyEarlyTail, "{guard}", hex.EncodeToString(src), 1)...)
}

// pyEarlyOver are the files laid for the Python whose standard library's
// folder is std: its encodings/__init__.py with the tail, and, over a
// compiled copy of it Python would take without looking at the source
// (an unchecked hash-based .pyc), an empty file, which Python passes over
// for the source. Nothing when the file cannot be made.
func pyEarlyOver(std string) []sandbox.OverFile {
	to := filepath.Join(std, "encodings", "__init__.py")
	real, err := filepath.EvalSymlinks(to)
	if err != nil {
		return nil
	}
	own, err := guard.ReadBounded(real, 1<<20)
	if err != nil || bytes.Contains(own, []byte(pyEarlyMark)) {
		return nil
	}
	from := pyEngineFile("encodings-", ".py", pyEarlyContent(own))
	if from == "" {
		return nil
	}
	out := []sandbox.OverFile{{From: from, To: to}}
	return append(out, pyUncheckedPycs(to)...)
}

// pyUncheckedPycs are the files laid over the compiled copies of the
// source at to that Python uses without comparing them with the source
// (unchecked hash-based, PEP 552): an empty file each.
func pyUncheckedPycs(to string) []sandbox.OverFile {
	cache := filepath.Join(filepath.Dir(to), "__pycache__")
	entries, err := os.ReadDir(cache)
	if err != nil {
		return nil
	}
	stem := strings.TrimSuffix(filepath.Base(to), ".py") + "."
	var out []sandbox.OverFile
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, stem) || !strings.HasSuffix(n, ".pyc") || !e.Type().IsRegular() {
			continue
		}
		head := make([]byte, 8)
		f, err := os.Open(filepath.Join(cache, n))
		if err != nil {
			continue
		}
		k, _ := f.Read(head)
		f.Close()
		// The flags after the magic number: bit 0 hash-based, bit 1
		// checked against the source.
		if k < 8 || head[4]&1 == 0 || head[4]&2 != 0 {
			continue
		}
		if from := pyEngineFile("nopyc-", ".pyc", []byte{}); from != "" {
			out = append(out, sandbox.OverFile{From: from, To: filepath.Join(cache, n)})
		}
	}
	return out
}

// pyEngineFile is a file of the engine's folder holding data, written once
// per content under a name that starts with prefix and ends with ext; ""
// when data is nil or the file cannot be written.
func pyEngineFile(prefix, ext string, data []byte) string {
	dir := pyGuardDir()
	if dir == "" || data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	file := filepath.Join(dir, prefix+hex.EncodeToString(sum[:])[:16]+ext)
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return file
	}
	if err := writeReadOnly(dir, file, data); err != nil {
		return ""
	}
	return file
}
