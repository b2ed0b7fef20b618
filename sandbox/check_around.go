package sandbox

import (
	"os"
	"path/filepath"
)

// The work tree around a check's tree. A loop in a sub-folder of its
// repository judges a tree whose checks may read the rest of it
// (`cmp a.txt ../other/a.txt`); the landing judges the whole merged tree.
// A check box shows that work tree read-only beneath the tree's own
// throw-away layer, wherever it lives: a work tree under /tmp or /var/tmp
// is otherwise hidden by the view's fresh folders, one under HOME by
// HOME's mask. The box's hidden folders and the masked paths (other
// loops' records and holdout files) stay out of it.

// aroundOf is the canonical folder around holding tree, and the masked
// paths inside it that exist; none when around is empty, not a folder,
// the tree itself or not above it.
func aroundOf(around, tree string, masked []string) (string, []string) {
	if around == "" || !filepath.IsAbs(around) {
		return "", nil
	}
	a, err := canonical(around)
	if err != nil || a == tree || a == "/" || !Within(tree, a) {
		return "", nil
	}
	if fi, err := os.Stat(a); err != nil || !fi.IsDir() {
		return "", nil
	}
	var in []string
	for _, m := range existing(masked) {
		if Within(m, a) && m != a {
			in = append(in, m)
		}
	}
	return a, in
}

// aroundBwrap are bubblewrap's arguments that show the work tree around
// the tree read-only, to be given before the tree's own binds.
func (b *CheckBox) aroundBwrap(m Manifest) []string {
	if b.around == "" {
		return nil
	}
	later := append(append(append([]string{b.tree, b.scratch}, b.targets...), b.hide...), b.views...)
	return append([]string{"--ro-bind", b.around, b.around}, othersBwrap(b.others, m, later)...)
}

// aroundAgain shows the work tree around the tree again when a hidden
// folder holds it (a worktree loop's work tree in the engine's state
// folder), before the tree's bind, then masks what other loops keep
// there.
func (b *CheckBox) aroundAgain(m Manifest) []string {
	if b.around == "" {
		return nil
	}
	var a []string
	if covered(b.around, b.hide) {
		a = append(a, b.aroundBwrap(m)...)
	}
	return a
}

// aroundMasks mask the other loops' paths inside the work tree around the
// tree, last (over the tree's bind too); those inside a hidden folder are
// hidden already.
func (b *CheckBox) aroundMasks() []string {
	var m []string
	for _, p := range b.masked {
		if !covered(p, b.hide) || covered(b.around, b.hide) {
			m = append(m, p)
		}
	}
	return maskArgs(m)
}

// aroundReads are Landlock's read grants for the work tree around the
// tree: the folder itself where nothing of it is hidden or masked, else
// each entry that holds none of them, recursively, so that what is hidden
// is never granted (Landlock grants only; it cannot take a path back).
func (b *CheckBox) aroundReads() []string {
	if b.around == "" {
		return nil
	}
	out := append([]string(nil), b.masked...)
	out = append(out, b.hide...)
	out = append(out, otherDirs(b.others)...)
	grants := grantsAvoiding(b.around, out, 0)
	for _, s := range othersReads(b.others) {
		if !covered(s, b.hide) && !covered(s, b.masked) {
			grants = append(grants, s)
		}
	}
	return grants
}

// outsideOthers are the masked paths that other loops' folders do not
// hold (what they hold is out of the view already), and those inside the
// tree.
func outsideOthers(masked []string, others []otherView, tree string) []string {
	var out []string
	for _, m := range masked {
		if !covered(m, otherDirs(others)) || Within(m, tree) {
			out = append(out, m)
		}
	}
	return out
}

// grantsAvoiding is dir, or the entries of dir that are not and do not hold
// one of avoid, found recursively (to a depth of 32: deeper, nothing).
func grantsAvoiding(dir string, avoid []string, depth int) []string {
	holds := false
	for _, p := range avoid {
		if Within(dir, p) {
			return nil
		}
		if Within(p, dir) {
			holds = true
		}
	}
	if !holds {
		return []string{dir}
	}
	if depth > 32 {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			out = append(out, grantsAvoiding(p, avoid, depth+1)...)
			continue
		}
		if !covered(p, avoid) {
			out = append(out, p)
		}
	}
	return out
}
