package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Other loops' folders around a check's tree. A check sees the git work
// tree around its tree read-only (check_around.go); every other loop
// folder in it is shown by construction, not by a list of its secrets:
// an empty folder of the view's own in which the entries git tracks are
// laid, and nothing else. Its records folder, its holdout files (which
// git must ignore) and any file git does not track stay out of the view
// whether or not that loop's engine ever ran on this machine, with this
// state folder. Binds are laid only in other loops' folders, one per
// tracked entry; past otherBindBudget bytes of arguments, a folder of
// theirs that held only tracked entries when the box was made is laid
// whole instead (see collapse).

// OtherLoop is another loop's folder around a view and what git says of
// its entries.
type OtherLoop struct {
	// Dir is the loop folder, absolute.
	Dir string
	// Tracked are the entries git tracks in it (files, links,
	// submodules), relative to Dir with slashes: the only ones shown.
	Tracked []string
	// Others are the entries git does not track (untracked, ignored; a
	// folder ends with a slash), relative to Dir with slashes: a folder
	// holding one is never laid whole.
	Others []string
}

// otherBindBudget bounds the bytes of arguments one box lays for other
// loops' folders one tracked entry at a time (the box's arguments travel
// in one environment entry, which the kernel bounds at 128 KiB).
const otherBindBudget = 48 << 10

// otherView is one other loop's folder as a view lays it: the folder, and
// the entries laid in it (absolute, canonical parents).
type otherView struct {
	dir   string
	holds bool // the folder holds the tree (a loop above it)
	shown []string
}

// planOthers turns loops into the views laid around tree: those inside
// around, not tree nor inside it, nor inside another one.
func planOthers(loops []OtherLoop, around, tree string) []otherView {
	var out []otherView
	size := 0
	loops = append([]OtherLoop(nil), loops...)
	sort.SliceStable(loops, func(i, j int) bool { return len(loops[i].Dir) < len(loops[j].Dir) })
	for _, l := range loops {
		d, err := canonical(l.Dir)
		if err != nil || around == "" || d == tree || Within(d, tree) || !Within(d, around) || covered(d, otherDirs(out)) {
			continue // a loop inside another's folder is laid with it: only what git tracks
		}
		v := otherView{dir: d, holds: Within(tree, d)}
		keep := ""
		if v.holds {
			keep, _ = filepath.Rel(d, tree)
			keep = filepath.ToSlash(keep)
		}
		for _, t := range l.Tracked {
			if keep != "" && within(t, keep) {
				continue
			}
			v.shown = append(v.shown, t)
			size += 2*len(d) + 2*len(t) + 14
		}
		out = append(out, v)
		if size > otherBindBudget {
			// Collapse this and later folders.
			out[len(out)-1].shown = collapse(v.shown, l.Others, keep)
		}
	}
	for i := range out {
		for j, s := range out[i].shown {
			out[i].shown[j] = filepath.Join(out[i].dir, filepath.FromSlash(s))
		}
		sort.Strings(out[i].shown)
	}
	return out
}

// within says whether the relative path p is root or inside it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// collapse lays a folder whole in place of its tracked entries when it
// held none of others and is not on the way to keep (nor the loop folder
// itself): one bind for a folder of thousands of files.
func collapse(tracked, others []string, keep string) []string {
	dirty := map[string]bool{"": true}
	mark := func(p string, self bool) {
		p = strings.TrimSuffix(p, "/")
		if self {
			dirty[p] = true
		}
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			dirty[d] = true
		}
	}
	for _, o := range others {
		mark(o, true)
	}
	if keep != "" {
		mark(keep, true)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range tracked {
		chosen := t
		for i := 0; i < len(t); i++ {
			if t[i] == '/' && !dirty[t[:i]] {
				chosen = t[:i]
				break
			}
		}
		if !seen[chosen] {
			seen[chosen] = true
			out = append(out, chosen)
		}
	}
	return out
}

// othersBwrap are bubblewrap's arguments that lay other loops' folders
// over the work tree around the tree, after its bind: each an empty
// folder with its tracked entries bound read-only (a link laid as a link,
// a missing entry left out), then what the manifest shows inside it
// (sandbox.allow_read) again. A folder that holds none of later (the
// tree, the mounts laid after) is made read-only; one that does stays
// writable for their mount points to be made (a throw-away folder of the
// check's own).
func othersBwrap(others []otherView, m Manifest, later []string) []string {
	var a []string
	for _, v := range others {
		if fi, err := os.Lstat(v.dir); err != nil || !fi.IsDir() {
			continue
		}
		a = append(a, "--tmpfs", v.dir)
		for _, s := range v.shown {
			fi, err := os.Lstat(s)
			switch {
			case err != nil || !realParent(s):
				continue // gone, or a link on its way that would lead elsewhere
			case fi.Mode()&os.ModeSymlink != 0:
				if t, err := os.Readlink(s); err == nil {
					a = append(a, "--symlink", t, s)
				}
			case fi.IsDir() || fi.Mode().IsRegular():
				a = append(a, "--ro-bind", s, s)
			}
		}
		for _, e := range m {
			if e.How == ReadOnlyBind && Within(e.Path, v.dir) && e.Path != v.dir {
				a = append(a, "--ro-bind", e.Path, e.Path)
			}
		}
		holds := v.holds
		for _, l := range later {
			holds = holds || Within(l, v.dir)
		}
		if !holds {
			a = append(a, "--remount-ro", v.dir)
		}
	}
	return a
}

// othersReads are Landlock's read grants in other loops' folders: their
// tracked entries (links left out: Landlock would grant their targets).
func othersReads(others []otherView) []string {
	var out []string
	for _, v := range others {
		for _, s := range v.shown {
			if fi, err := os.Lstat(s); err == nil && fi.Mode()&os.ModeSymlink == 0 && realParent(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// otherDirs are the other loops' folders.
func otherDirs(others []otherView) []string {
	out := make([]string, 0, len(others))
	for _, v := range others {
		out = append(out, v.dir)
	}
	return out
}

// realParent says whether the folder holding p is where its path says,
// no link on the way (a bind's source is resolved on the host: a link
// there would lay what it leads to).
func realParent(p string) bool {
	d, err := filepath.EvalSymlinks(filepath.Dir(p))
	return err == nil && d == filepath.Dir(p)
}
