package sandbox

import (
	"os"
	"path/filepath"
)

// An OverFile is a file of the engine's shown read-only at a path of the
// machine in a bubblewrap box's view, whatever that path holds outside
// it: From's content at To (absolute). A link at To is followed (the file
// is laid where the link leads); where To does not exist, its folder is
// shown as a fresh one holding the folder's entries (bound read-only) and
// the file. The engine's sitecustomize is laid so over each Python's own
// (judge/pyguard.go): Python imports it whatever a check does to
// PYTHONPATH, and under -E and -I too.
type OverFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// overArgs are bubblewrap's arguments that lay the files of over, after
// every other mount of the view's system part: the fresh folders first
// (each holds the real entries), then the files over existing ones.
func overArgs(over []OverFile) []string {
	var binds, dirs []string
	fresh := map[string][]OverFile{}
	for _, o := range over {
		if !filepath.IsAbs(o.From) || !filepath.IsAbs(o.To) {
			continue
		}
		if fi, err := os.Stat(o.From); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		to := overTarget(o.To)
		if fi, err := os.Stat(to); err == nil {
			if fi.Mode().IsRegular() {
				binds = append(binds, "--ro-bind", o.From, to)
			}
			continue // a folder or a device of that name: left as it is
		}
		if _, err := os.Lstat(to); err == nil {
			continue // a link that leads nowhere
		}
		d := filepath.Dir(to)
		if fresh[d] == nil {
			dirs = append(dirs, d)
		}
		fresh[d] = append(fresh[d], OverFile{From: o.From, To: to})
	}
	var a []string
	for _, d := range dirs {
		a = append(a, freshFolderWith(d, fresh[d])...)
	}
	return append(a, binds...)
}

// overTarget is where a file laid at p lands: p with its folder's links
// resolved and, where p is a link, where the link leads (one that leads
// nowhere: where it would).
func overTarget(p string) string {
	p = filepath.Clean(p)
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(d, filepath.Base(p))
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return p
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	t, err := os.Readlink(p)
	if err != nil {
		return p
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(p), t)
	}
	return filepath.Clean(t)
}

// freshFolderWith shows dir as a fresh folder holding dir's entries, each
// bound read-only (a link as a link), and the files of
// add, then read-only: bubblewrap cannot make a new file inside a
// read-only folder, nor should it make one in a folder of the host's.
func freshFolderWith(dir string, add []OverFile) []string {
	a := []string{"--tmpfs", dir}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", t, p)
			}
		} else if _, err := os.Stat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, o := range add {
		a = append(a, "--ro-bind", o.From, o.To)
	}
	return append(a, "--remount-ro", dir)
}
