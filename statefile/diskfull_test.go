package statefile

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// The first write that failed for want of space (ENOSPC or EDQUOT) is
// the reason to stop, naming its file; other write errors are not.
func TestFullDiskWriteError(t *testing.T) {
	var f Full
	never := func(string) (uint64, bool) { t.Fatal("free space measured though a write had failed"); return 0, false }
	f.Note(nil)
	f.Note(&os.PathError{Op: "write", Path: "/loop/working-records/x.jsonl", Err: syscall.EIO})
	if why := f.Why(func(string) (uint64, bool) { return 1 << 30, true }, "/loop"); why != "" {
		t.Fatalf("an EIO counted as a full disk: %q", why)
	}
	f.Note(&os.PathError{Op: "write", Path: "/loop/working-records/x.jsonl", Err: syscall.ENOSPC})
	f.Note(&os.PathError{Op: "write", Path: "/loop/working-records/state.json", Err: syscall.ENOSPC})
	if why := f.Why(never, "/loop"); !strings.HasPrefix(why, "no space left on device: write /loop/working-records/x.jsonl: no space left on device; free some space") {
		t.Fatalf("Why %q; want the first failed write, with its file", why)
	}
	var q Full
	q.Note(errors.Join(errors.New("save"), &os.PathError{Op: "write", Path: "/p", Err: syscall.EDQUOT}))
	if why := q.Why(never); !strings.Contains(why, "no space left on device: save") {
		t.Fatalf("a quota exceeded is not taken for a full disk: %q", why)
	}
	if IsNoSpace(syscall.EIO) || !IsNoSpace(&os.PathError{Err: syscall.ENOSPC}) {
		t.Fatal("IsNoSpace")
	}
}

// Before any write failed: the first folder with less than MinFree bytes
// free, an empty path skipped, a folder whose space cannot be told not
// counted.
func TestFullDiskFreeSpace(t *testing.T) {
	var f Full
	free := map[string]uint64{"/loop": 1 << 30, "/priv": MinFree - 1}
	measure := func(p string) (uint64, bool) {
		if p == "" {
			t.Fatal("an empty path measured")
		}
		n, ok := free[p]
		return n, ok
	}
	if why := f.Why(measure, "", "/loop", "/unknown"); why != "" {
		t.Fatalf("room enough: %q", why)
	}
	want := "no space left on device: /priv has 65535 bytes free; free some space, then run the loop again (it resumes where it stopped)"
	if why := f.Why(measure, "/loop", "/priv"); why != want {
		t.Fatalf("Why %q, want %q", why, want)
	}
	free["/priv"] = MinFree
	if why := f.Why(measure, "/loop", "/priv"); why != "" {
		t.Fatalf("exactly MinFree counted as full: %q", why)
	}
	if runtime.GOOS == "linux" {
		if n, ok := Free(t.TempDir()); !ok || n == 0 {
			t.Fatalf("Free of a temporary folder: %d %v", n, ok)
		}
	}
}
