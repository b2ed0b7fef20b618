//go:build unix

package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPinSpecialBits(t *testing.T) {
	for m, want := range map[os.FileMode]string{
		0o755:                                         "",
		0o4755 | os.ModeSetuid:                        "setuid",
		os.ModeSetgid:                                 "setgid",
		os.ModeSticky | os.ModeDir:                    "sticky",
		os.ModeSetuid | os.ModeSetgid:                 "setuid, setgid",
		os.ModeSetuid | os.ModeSticky:                 "setuid, sticky",
		os.ModeSetgid | os.ModeSticky:                 "setgid, sticky",
		os.ModeSetuid | os.ModeSetgid | os.ModeSticky: "setuid, setgid, sticky",
		os.ModeSymlink | os.ModeNamedPipe:             "",
	} {
		if got := specialBits(m); got != want {
			t.Errorf("specialBits(%v) = %q, want %q", m, got, want)
		}
	}
}

// StripInPlace, each kind: what it does and the change it lists.
func TestPinSpecialStripInPlace(t *testing.T) {
	dir := viewRoot(t)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o755)
	os.WriteFile(filepath.Join(dir, "suid"), []byte("x"), 0o700)
	os.Chmod(filepath.Join(dir, "suid"), 0o750|os.ModeSetuid|os.ModeSetgid)
	os.MkdirAll(filepath.Join(dir, "sticky"), 0o755)
	os.Chmod(filepath.Join(dir, "sticky"), 0o1777|os.ModeSticky)
	os.MkdirAll(filepath.Join(dir, "plaindir"), 0o755)
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Symlink("suid", filepath.Join(dir, "link"))
	dev := unix.Mknod(filepath.Join(dir, "dev"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))) == nil
	rels := []string{"plain", "suid", "sticky", "plaindir", "fifo", "sock", "link", "", "missing"}
	if dev {
		rels = append(rels, "dev")
	}
	got := map[string]LayerChange{}
	for _, c := range StripInPlace(dir, rels) {
		if _, dup := got[c.Path]; dup {
			t.Errorf("%s listed twice", c.Path)
		}
		got[c.Path] = c
	}
	want := map[string]LayerChange{
		"suid":   {Path: "suid", What: "written", Applied: true, Stripped: "setuid, setgid"},
		"sticky": {Path: "sticky", What: "written", Applied: true, Stripped: "sticky"},
		"fifo":   {Path: "fifo", What: "special file", Why: whySpecial},
		"sock":   {Path: "sock", What: "special file", Why: whySpecial},
	}
	if dev {
		want["dev"] = LayerChange{Path: "dev", What: "special file", Why: whySpecial}
	}
	if len(got) != len(want) {
		t.Errorf("changes %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	for name, mode := range map[string]os.FileMode{"plain": 0o755, "suid": 0o750, "sticky": 0o777 | os.ModeDir, "plaindir": 0o755 | os.ModeDir} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v %v, want %v", name, fi.Mode(), err, mode)
		}
	}
	for _, name := range []string{"fifo", "sock", "dev"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s stays", name)
		}
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "link")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}
