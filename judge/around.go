package judge

import (
	"os"
	"path/filepath"
)

// workTreeAround is the git work tree that holds tree (the nearest folder
// above it with a .git, a folder or a linked work tree's file), which a
// check of tree sees read-only around it; "" when tree is its own work
// tree's top or lies in none.
func workTreeAround(tree string) string {
	abs, err := filepath.Abs(tree)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == abs {
				return ""
			}
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
