package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/looprinter/looprinter/sandbox/nshelper"
)

// CopyFile copies the regular file from to a new file to, with mode: to
// must not exist (it is never written through).
func CopyFile(from, to string, mode os.FileMode) error { return nshelper.CopyFile(from, to, mode) }

// CopyTree copies the regular files, links and folders of src to dst,
// leaving out the relative paths in skip.
func CopyTree(src, dst string, skip map[string]bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip[filepath.ToSlash(rel)] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return CopyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}
