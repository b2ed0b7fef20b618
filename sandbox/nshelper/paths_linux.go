//go:build linux

package nshelper

import (
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
