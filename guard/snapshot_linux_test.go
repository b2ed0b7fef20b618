package guard

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// sameStat is the cheap comparison that decides whether a protected file
// is read again: equal only when inode, size, mode, mtime and ctime all
// are; and statEntry takes ctime to the nanosecond.
func TestGuardStatComparison(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	a := statEntry("f", fi)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	if want := st.Ctim.Sec*1e9 + st.Ctim.Nsec; a.CtimeNS != want || a.Ino != st.Ino || a.Nlink != 1 || a.Size != 1 || a.Mode != 0o644 {
		t.Fatalf("statEntry %+v, want ctime %d ns, inode %d, 1 link, size 1, mode 0644", a, want, st.Ino)
	}
	if !sameStat(a, a) {
		t.Fatal("an entry differs from itself")
	}
	for name, change := range map[string]func(*snapEntry){
		"inode": func(e *snapEntry) { e.Ino++ },
		"size":  func(e *snapEntry) { e.Size++ },
		"mode":  func(e *snapEntry) { e.Mode = 0o755 },
		"mtime": func(e *snapEntry) { e.MtimeNS++ },
		"ctime": func(e *snapEntry) { e.CtimeNS++ },
	} {
		b := a
		change(&b)
		if sameStat(a, b) {
			t.Errorf("another %s compares as the same stat", name)
		}
	}
}
