package nshelper

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// reuseKeep readies keep, the folder of a built layer's base and aside
// mounts (prepareBuilt), for this start. What the last start left there,
// with nothing mounted any more (its mounts died with its namespace), is
// empty folders: base, m<i> (mount points) and w<i> (overlayfs work
// folders, each holding overlayfs's own empty "work" of mode 000). Those
// are kept, and only each w<i>'s "work" removed (overlayfs would make it
// again at the mount anyway): a look and one rmdir a kept folder instead
// of removing three folders after each run and making two again before
// the next. Anything else there, or a folder not empty, is removed whole.
func reuseKeep(keep string) error {
	ents, err := os.ReadDir(keep)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return RemoveAllWritable(keep)
	}
	for _, e := range ents {
		p := filepath.Join(keep, e.Name())
		if e.Type().IsDir() && reusable(p, e.Name()) {
			continue
		}
		if err := RemoveAllWritable(p); err != nil {
			return err
		}
	}
	return nil
}

// reusable says whether the entry name of keep, a folder, can stay as
// it is (a w<i> once its "work" is removed).
func reusable(p, name string) bool {
	switch {
	case name == "base" || indexed(name, "m"):
		return EmptyDir(p)
	case indexed(name, "w"):
		if err := syscall.Rmdir(filepath.Join(p, "work")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		return EmptyDir(p)
	}
	return false
}

// indexed says whether name is prefix and a number.
func indexed(name, prefix string) bool {
	n, ok := strings.CutPrefix(name, prefix)
	if !ok || n == "" {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// mkdirKept makes the folder d of keep, or keeps it where reuseKeep left
// it (an empty folder).
func mkdirKept(d string) error {
	err := os.Mkdir(d, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(d); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}
