package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// CopyTree copies files (with their modes), folders and links as links,
// and leaves out what skip names, folders with all they hold.
func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "room")
	os.MkdirAll(filepath.Join(src, "a", "b"), 0o755)
	os.MkdirAll(filepath.Join(src, "records", "deep"), 0o755)
	os.WriteFile(filepath.Join(src, "a", "b", "x.sh"), []byte("echo x\n"), 0o755)
	os.WriteFile(filepath.Join(src, "conftest.py"), []byte("cheat\n"), 0o644)
	os.WriteFile(filepath.Join(src, "records", "deep", "r"), []byte("r\n"), 0o600)
	os.Symlink("a/b/x.sh", filepath.Join(src, "link"))
	if err := CopyTree(src, dst, map[string]bool{"records": true, "conftest.py": true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a", "b", "x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("x.sh: %v %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "a/b/x.sh" {
		t.Errorf("link: %q %v", target, err)
	}
	for _, gone := range []string{"records", "conftest.py"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s was copied", gone)
		}
	}
}
