package nshelper

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CopyFile copies the regular file from to a new file to, with mode: to
// must not exist (it is never written through).
func CopyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// RealParent says whether every folder on the way to rel (slash-separated)
// inside root is a real folder (not a link).
func RealParent(root, rel string) bool {
	cur := root
	parts := strings.Split(rel, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
