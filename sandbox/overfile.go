package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
)

// An OverFile is a file of the engine's shown read-only at a path of the
// machine in a bubblewrap box's view, whatever that path holds outside
// it: From's content at To (absolute). A link at To is followed (the file
// is laid where the link leads); where To does not exist, in a folder of
// a layer's target (HOME's) each check gets the file in its own layer, and
// elsewhere (a read-only folder of the system's) the folder is shown as a
// fresh one holding links to its entries and the file. The engine's
// sitecustomize is laid so over each Python's own (judge/pyguard_lay.go):
// Python imports it whatever a check does to PYTHONPATH, and under -E and
// -I too.
type OverFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// overArgs are bubblewrap's arguments that lay the files of over, after
// every other mount of the view's system part: the fresh folders first,
// then the files over existing ones elsewhere.
func overArgs(over []OverFile) []string {
	var laid []OverFile
	var dirs []string
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
				laid = append(laid, OverFile{From: o.From, To: to})
			}
			continue // a folder or a device of that name: left as it is
		}
		if _, err := os.Lstat(to); err == nil {
			continue // a link that leads nowhere
		}
		if d := filepath.Dir(to); fresh[d] == nil {
			dirs = append(dirs, d)
			fresh[d] = []OverFile{}
		}
		laid = append(laid, OverFile{From: o.From, To: to})
	}
	var binds []OverFile
	for _, o := range laid {
		if d := filepath.Dir(o.To); fresh[d] != nil {
			fresh[d] = append(fresh[d], o)
		} else {
			binds = append(binds, o)
		}
	}
	var a []string
	for i, d := range dirs {
		a = append(a, freshFolderWith(d, filepath.Join(overAside, strconv.Itoa(i)), fresh[d])...)
	}
	for _, o := range binds {
		a = append(a, "--ro-bind", o.From, besideFresh(o.To, dirs))
	}
	return a
}

// besideFresh is where a file at to is laid: to, or for one beneath a
// folder of dirs shown anew (encodings/__init__.py of a standard library
// given a sitecustomize.py), the same place in the folder's aside, where
// the fresh folder's link leads: bubblewrap does not follow that link.
func besideFresh(to string, dirs []string) string {
	for i, d := range dirs {
		if filepath.Dir(to) != d && Within(to, d) {
			if rel, err := filepath.Rel(d, to); err == nil {
				return filepath.Join(overAside, strconv.Itoa(i), rel)
			}
		}
	}
	return to
}

// splitOver parts over: the files whose target is missing in a folder
// inside one of the layers' targets (HOME's, where a version manager keeps
// its Pythons), with To where the file lands, which each check lays in its
// own layer (the layer stays writable there: a check may install into
// site-packages as before; bubblewrap makes the empty file it binds over
// in the check's layer, never in the host's folder); and the rest, which
// overArgs lays.
func splitOver(over []OverFile, targets []string) (inLayer, rest []OverFile) {
	for _, o := range over {
		to := overTarget(o.To)
		_, err := os.Lstat(to)
		if !filepath.IsAbs(o.From) || !filepath.IsAbs(o.To) || err == nil || !covered(filepath.Dir(to), targets) {
			rest = append(rest, o)
			continue
		}
		if fi, err := os.Stat(o.From); err == nil && fi.Mode().IsRegular() {
			inLayer = append(inLayer, OverFile{From: o.From, To: to})
		}
	}
	return inLayer, rest
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

// overAside is the folder of the view where a folder shown anew is bound
// as it is, read-only: its entries in the fresh one lead there.
const overAside = "/.looprinter-over"

// freshFolderWith shows dir as a fresh folder whose entries are links to
// dir's own (bound as it is at aside; a link of dir's stays the link it
// is), with the files of add, then read-only: bubblewrap cannot make a new
// file inside a read-only folder, nor should it make one in a folder of
// the host's. Links cost no mount: a Python's standard library holds 200
// entries, and a check box's server lays them again for each check.
func freshFolderWith(dir, aside string, add []OverFile) []string {
	a := []string{"--ro-bind", dir, aside, "--tmpfs", dir}
	entries, _ := os.ReadDir(dir)
	laid := map[string]bool{}
	for _, o := range add {
		laid[o.To] = true
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		t := filepath.Join(aside, e.Name())
		if laid[p] {
			continue
		}
		if e.Type()&os.ModeSymlink != 0 {
			var err error
			if t, err = os.Readlink(p); err != nil {
				continue
			}
		}
		a = append(a, "--symlink", t, p)
	}
	for _, o := range add {
		a = append(a, "--ro-bind", o.From, o.To)
	}
	return append(a, "--remount-ro", dir)
}
