package judge

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/loopdir"
	"github.com/looprinter/looprinter/safegit"
	"github.com/looprinter/looprinter/sandbox"
)

// LoopFile is the loop file's name that makes a folder a loop folder for
// the views (loopFolder).
const LoopFile = "loop.yaml"

// loopFolder says whether dir is a loop folder: it holds a loop file or a
// records folder (a loop whose engine ran there, whatever its loop file's
// name).
func loopFolder(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, LoopFile)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	fi, err := os.Lstat(filepath.Join(dir, loopdir.RecordsDir))
	return err == nil && fi.IsDir()
}

// treeList is git's listing of a work tree, relative to its top with
// slashes: what git tracks, what it does not track and does not ignore
// (file by file), and what it ignores (a wholly ignored folder as one
// entry, with a trailing slash).
type treeList struct {
	top                         string
	tracked, untracked, ignored []string
}

// listTree lists the work tree top with two runs of git; nil when top is
// "" or git cannot list it.
func listTree(top string) *treeList {
	if top == "" {
		return nil
	}
	ctx := context.Background()
	list := func(args ...string) ([]string, bool) {
		out, err := safegit.Run(ctx, top, nil, append([]string{"ls-files", "-z"}, args...)...)
		if err != nil {
			return nil, false
		}
		return strings.FieldsFunc(out, func(r rune) bool { return r == 0 }), true
	}
	// -t tags each entry: "? " for one git does not track.
	// The two runs at once: each walks the work tree.
	var ignored []string
	var ok2 bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		ignored, ok2 = list("--others", "--ignored", "--exclude-standard", "--directory")
	}()
	both, ok1 := list("-t", "--cached", "--others", "--exclude-standard")
	<-done
	if !ok1 || !ok2 {
		return nil
	}
	t := &treeList{top: top, ignored: ignored}
	seen := map[string]bool{}
	for _, e := range both {
		tag, p, ok := strings.Cut(e, " ")
		if !ok || seen[e] {
			continue
		}
		seen[e] = true
		if tag == "?" {
			t.untracked = append(t.untracked, p)
		} else {
			t.tracked = append(t.tracked, p)
		}
	}
	return t
}

// around are the loop folders of the work tree other than own and tree
// (and those inside tree): each with what git tracks in it and what it
// does not, found in the listing and on the way from tree up to the top,
// whether or not their engines ever ran here.
func (t *treeList) around(tree, own string) []sandbox.OtherLoop {
	if t == nil {
		return nil
	}
	var ways []string
	for d := filepath.Dir(tree); sandbox.Within(d, t.top); d = filepath.Dir(d) {
		ways = append(ways, d)
		if d == t.top || filepath.Dir(d) == d {
			break
		}
	}
	var out []sandbox.OtherLoop
	for _, l := range t.loops(ways, func(d string) bool {
		return d != tree && d != own && !sandbox.Within(d, tree)
	}) {
		out = append(out, l.OtherLoop)
	}
	return out
}

// OtherLoopSecretsIn are the paths inside the loop folder dir that other
// loops' folders inside it keep from its agent: in each, its records
// folder and what git ignores there (its holdout files must be ignored),
// found from git's listing, whether or not that loop's engine ever ran
// here. The loop's own agent works on the rest of them (their tracked and
// untracked files are its work too). None outside a git work tree.
func OtherLoopSecretsIn(dir string) []string {
	dir = canonicalOr(dir)
	top := cachedGitTop(dir)
	if top == "" {
		return nil
	}
	return listTree(canonicalOr(top)).secretsIn(dir)
}

// secretsIn is OtherLoopSecretsIn for a loop folder of the listed tree.
func (t *treeList) secretsIn(dir string) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, l := range t.loops(nil, func(d string) bool { return d != dir && sandbox.Within(d, dir) }) {
		out = append(out, filepath.Join(l.Dir, loopdir.RecordsDir))
		for _, o := range l.Ignored {
			out = append(out, filepath.Join(l.Dir, filepath.FromSlash(strings.TrimSuffix(o, "/"))))
		}
	}
	return out
}

// loops are the loop folders of the listed tree that want keeps, with
// what git tracks in each and what it does not: a loop file tracked or
// not; an ignored folder that is a records folder or holds a loop file at
// its top; and among more (folders checked one by one).
func (t *treeList) loops(more []string, want func(string) bool) []otherLoop {
	dirs := map[string]bool{}
	add := func(rel string) {
		d := filepath.Join(t.top, filepath.FromSlash(rel))
		if want(d) && loopFolder(d) {
			dirs[d] = true
		}
	}
	for _, f := range append(append([]string(nil), t.tracked...), t.untracked...) {
		if f == LoopFile || strings.HasSuffix(f, "/"+LoopFile) {
			add(pathDir(f))
		}
	}
	for _, f := range t.ignored {
		switch {
		case f == loopdir.RecordsDir+"/" || strings.HasSuffix(f, "/"+loopdir.RecordsDir+"/"):
			add(pathDir(strings.TrimSuffix(f, "/")))
		case strings.HasSuffix(f, "/"):
			add(strings.TrimSuffix(f, "/"))
		case f == LoopFile || strings.HasSuffix(f, "/"+LoopFile):
			add(pathDir(f))
		}
	}
	for _, d := range more {
		if want(d) && loopFolder(d) {
			dirs[d] = true
		}
	}
	var out []otherLoop
	for d := range dirs {
		rel, err := filepath.Rel(t.top, d)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		l := otherLoop{OtherLoop: sandbox.OtherLoop{Dir: d, Tracked: under(t.tracked, rel)}, Ignored: under(t.ignored, rel)}
		l.Others = append(under(t.untracked, rel), l.Ignored...)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

// otherLoop is a loop folder found in a work tree, and what git ignores
// in it (relative, a folder with a trailing slash).
type otherLoop struct {
	sandbox.OtherLoop
	Ignored []string
}

// pathDir is the folder of a slash path relative to the work tree ("" at
// its top).
func pathDir(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

// under are the paths of list inside the folder rel ("." for the top),
// relative to it.
func under(list []string, rel string) []string {
	var out []string
	for _, p := range list {
		if rel == "." {
			out = append(out, p)
		} else if strings.HasPrefix(p, rel+"/") && len(p) > len(rel)+1 {
			out = append(out, p[len(rel)+1:])
		}
	}
	return out
}

// canonicalOr is p absolute with its links resolved, or p as it is.
func canonicalOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
