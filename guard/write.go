package guard

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces a file so that readers see the old or the new
// contents, never a part: write a temporary file beside it, then rename.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFile(path, data, 0o600, true)
}

// WriteFile replaces path atomically with data and mode; durable syncs the
// file before the rename and the folder after it.
func WriteFile(path string, data []byte, mode os.FileMode, durable bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if !durable {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir writes a folder's entries to disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// IsDir says whether p is a folder (following links).
func IsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
