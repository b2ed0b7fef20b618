// Package testkit holds the small helpers that the tests of many packages
// would otherwise each write again: writing a file or a tree of files,
// running git in a test's repository, making a repository with a first
// commit, skipping where a program is missing, waiting for a file and
// building a program, serving a socket. Each takes the test (a *testing.T or *testing.B) and
// stops it with t.Fatal when what it does fails, so a call site reads as one
// line.
//
// It imports nothing of looprinter's, so the tests of any package, the
// lowest included, can use it. (internal/testenv, beside it, is the other
// half: it keeps a package's tests off the user's own looprinter state from
// TestMain; this package is for the tests themselves.)
package testkit

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// WriteFile writes data to path (with mode 0644), making the folders above
// it first.
func WriteFile(t testing.TB, path, data string) {
	t.Helper()
	WriteFileMode(t, path, data, 0o644)
}

// WriteFileMode is WriteFile with the file's mode (0755 for a script).
func WriteFileMode(t testing.TB, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// WriteTree writes files (slash-separated paths relative to dir, to their
// contents) below dir with WriteFile.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
}

// Tree is WriteTree into a new temporary folder, which it returns.
func Tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	WriteTree(t, dir, files)
	return dir
}

// RealTempDir is t.TempDir with its links resolved (macOS's /var is a
// link to /private/var): the path a program that resolves links sees.
func RealTempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Need skips the test when program is not on PATH, and returns its path.
func Need(t testing.TB, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		t.Skipf("%s not installed", program)
	}
	return p
}

// gitConfig is what every Git run is given: an author and committer, no
// signing, main as the first branch, and no background housekeeping left
// running on a temporary folder. A call's own -c flags come after and win.
var gitConfig = []string{
	"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
	"-c", "init.defaultBranch=main", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
}

// Git runs git with args in dir, apart from the system's and the user's git
// configuration (what the machine's git is set to does not change a test)
// and with gitConfig, and returns its output with the space around it
// trimmed. It stops the test when git fails.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append(append([]string(nil), gitConfig...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// InitRepo makes dir a git repository on branch main with everything in it
// (what .gitignore leaves out apart) in a first commit, "start".
func InitRepo(t testing.TB, dir string) {
	t.Helper()
	Git(t, dir, "init", "-q")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-qm", "start")
}

// Serve listens on network at address (127.0.0.1:0 for a free port, a
// socket's path) until the test ends, and hands each connection to handle
// in a goroutine of its own; a nil handle closes each connection at once.
func Serve(t testing.TB, network, address string, handle func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if handle == nil {
		handle = func(c net.Conn) { c.Close() }
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln
}

// WaitFile waits until path exists, and stops the test when it has not
// appeared within timeout.
func WaitFile(t testing.TB, path string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

// GoBuild builds the Go package pkg (an import path, or a folder relative
// to the test's package) into the program out with go build and flags
// before the package (-tags, say), and stops the test when it fails.
func GoBuild(t testing.TB, out, pkg string, flags ...string) {
	t.Helper()
	args := append(append([]string{"build", "-o", out}, flags...), pkg)
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}
