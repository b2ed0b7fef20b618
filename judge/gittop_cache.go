package judge

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// The top of the git work tree that holds a loop folder is asked of git
// (gitTop: a git process) before every agent run, for the other loops'
// secrets to mask. git finds it by the .git entries on the folder's way
// up, so the answer is kept per folder while those entries are the same
// ones: none appeared or went, none was replaced (its file identity), and
// none changed its type, mode or owner (git refuses a repository of
// another owner). A look at each of them (a few lstat calls) replaces the
// process. What the key does not see: a bare repository made on the way
// up, or git's settings changed while the engine runs (safe.directory,
// GIT_CEILING_DIRECTORIES in the engine's own environment, which does not
// change): the next engine asks git again.
var topCache struct {
	sync.Mutex
	m map[string]cachedTop
}

type cachedTop struct {
	top string
	way []gitMark
}

// gitMark is what the .git entry of one folder on the way up is, as an
// lstat saw it (fi nil: none).
type gitMark struct{ fi os.FileInfo }

func (a gitMark) same(b gitMark) bool {
	if a.fi == nil || b.fi == nil {
		return a.fi == nil && b.fi == nil
	}
	return os.SameFile(a.fi, b.fi) && a.fi.Mode() == b.fi.Mode() && fileOwner(a.fi) == fileOwner(b.fi)
}

// gitWay is the .git entries of dir and of each folder above it.
func gitWay(dir string) []gitMark {
	var way []gitMark
	for d := dir; ; d = filepath.Dir(d) {
		var m gitMark
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			m = gitMark{fi: fi}
		}
		way = append(way, m)
		if filepath.Dir(d) == d {
			return way
		}
	}
}

// cachedGitTop is gitTop(dir), asked of git again only when the .git
// entries on dir's way up changed since it last was (dir is canonical).
func cachedGitTop(dir string) string {
	way := gitWay(dir)
	topCache.Lock()
	c, ok := topCache.m[dir]
	topCache.Unlock()
	if ok && slices.EqualFunc(c.way, way, gitMark.same) {
		return c.top
	}
	top := gitTop(dir)
	topCache.Lock()
	if topCache.m == nil {
		topCache.m = map[string]cachedTop{}
	}
	topCache.m[dir] = cachedTop{top: top, way: way}
	topCache.Unlock()
	return top
}
