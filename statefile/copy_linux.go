package statefile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fdatasync writes f's data to disk.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// WriteCopy replaces path with data for readers (people, tools, a fleet
// carrying the private folder), so that a reader sees the old or the new
// contents: the data is written in place into a spare file beside it,
// .NAME.next, which is then exchanged with path in one step (renameat2 with
// RENAME_EXCHANGE); the old contents become the next spare. No file is made
// or removed, and ext4 starts no write-out as it does for a file renamed
// over another. The copy is not synced (the journal is what a restart
// reads).
func WriteCopy(path string, data []byte) error {
	next := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".next")
	fd, err := spareFile(next)
	if err != nil {
		return err
	}
	_, werr := unix.Pwrite(fd, data, 0)
	if werr == nil {
		werr = unix.Ftruncate(fd, int64(len(data)))
	}
	cerr := unix.Close(fd)
	if werr != nil || cerr != nil {
		os.Remove(next)
		return errors.Join(werr, cerr)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, next, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err == nil {
		return nil
	}
	// No file to exchange with yet, or a file system without exchange: the
	// spare becomes the file, and the next copy makes a new spare.
	if err := os.Rename(next, path); err != nil {
		os.Remove(next)
		return err
	}
	return nil
}

// spareFile opens the spare file for writing: a plain file with one link,
// else (missing, or something planted in its place) a new one.
func spareFile(next string) (int, error) {
	fd, err := unix.Open(next, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err == nil {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 {
			return fd, nil
		}
		unix.Close(fd)
	}
	if err == unix.ENOENT {
		if err := os.MkdirAll(filepath.Dir(next), 0o700); err != nil {
			return -1, err
		}
	} else {
		os.Remove(next) // a link, a symlink, a fifo: never written through
	}
	return unix.Open(next, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
}
