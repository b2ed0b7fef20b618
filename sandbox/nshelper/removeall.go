package nshelper

import (
	"io"
	"os"
	"path/filepath"
)

// RemoveAllWritable is os.RemoveAll that first makes folders writable to
// their owner (overlayfs leaves a mode 000 folder in its work folder).
func RemoveAllWritable(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// EmptyDir says whether the folder dir can be read and holds nothing.
func EmptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == io.EOF
}
