package testkit

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTreeWritesEveryFileBelowANewFolder(t *testing.T) {
	dir := Tree(t, map[string]string{"a.txt": "a", "sub/deep/b.txt": "b"})
	for name, want := range map[string]string{"a.txt": "a", "sub/deep/b.txt": "b"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	WriteFileMode(t, filepath.Join(dir, "bin", "x.sh"), "#!/bin/sh\n", 0o755)
	if fi, err := os.Stat(filepath.Join(dir, "bin", "x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the script: %v %v", fi, err)
	}
}

func TestRealTempDirHasNoLinks(t *testing.T) {
	dir := RealTempDir(t)
	if r, err := filepath.EvalSymlinks(dir); err != nil || r != dir {
		t.Errorf("%s resolves to %s (%v)", dir, r, err)
	}
}

// Git commits as its own author on main whatever the machine's git is set
// to (a global configuration that would sign, or name another branch).
func TestGitIsApartFromTheUsersConfiguration(t *testing.T) {
	Need(t, "git")
	home := t.TempDir()
	WriteFile(t, filepath.Join(home, ".gitconfig"), "[init]\n\tdefaultBranch = trunk\n[commit]\n\tgpgsign = true\n[user]\n\tname = someone\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	dir := Tree(t, map[string]string{"a.txt": "a\n"})
	InitRepo(t, dir)
	if got := Git(t, dir, "log", "-1", "--format=%an <%ae> %s"); got != "t <t@example.com> start" {
		t.Errorf("the first commit: %q", got)
	}
	if got := Git(t, dir, "branch", "--show-current"); got != "main" {
		t.Errorf("the branch: %q", got)
	}
}

func TestWaitFileReturnsOnceTheFileIsThere(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ready")
	go func() {
		time.Sleep(50 * time.Millisecond)
		os.WriteFile(p, nil, 0o644)
	}()
	WaitFile(t, p, time.Minute)
}

func TestServeHandsEachConnectionOver(t *testing.T) {
	ln := Serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) { c.Write([]byte("hi")); c.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if b, err := io.ReadAll(c); err != nil || string(b) != "hi" {
		t.Errorf("read %q, %v", b, err)
	}
}
