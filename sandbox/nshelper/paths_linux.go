//go:build linux

package nshelper

import (
	"os"
	"path/filepath"
	"strings"
)

// within returns p relative to root, with slashes, when p is inside it.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// realParent says whether every folder on the way to rel inside target is
// a real folder (not a link).
func realParent(target, rel string) bool {
	cur := target
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
