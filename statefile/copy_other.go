//go:build !linux

package statefile

import (
	"os"
	"path/filepath"
)

// fdatasync writes f's data to disk.
func fdatasync(f *os.File) error { return f.Sync() }

// WriteCopy replaces path with data for readers: written beside it, then
// renamed over it (the Linux version exchanges it with a spare instead).
func WriteCopy(path string, data []byte) error {
	next := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".next")
	os.Remove(next) // whatever is there (a link planted in its place) is never written through
	if err := os.MkdirAll(filepath.Dir(next), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(next, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(next, path)
	}
	if werr != nil {
		os.Remove(next)
	}
	return werr
}
