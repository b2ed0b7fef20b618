package plan

import (
	"fmt"
	"path"
	"strings"
)

// Declared files (a plan task's touches): globs of the loop folder's
// files a task's run may change, relative, "/" between folders, each
// part in path.Match's syntax (*, ?, [a-z]) and "**" for any number of
// folders; a pattern names files, and one that ends in "/" a folder and
// everything in it (src/api/ is src/api/**). Two
// tasks whose patterns overlap never run in the same wave; a task that
// declares none runs beside any other (its merge decides).

// MaxTouches bounds one task's touches; MaxGlobLen one pattern.
const (
	MaxTouches = 100
	MaxGlobLen = 300
)

// GlobProblem says what is wrong with a touches pattern ("" when nothing).
func GlobProblem(g string) string {
	switch {
	case strings.TrimSpace(g) == "":
		return "is empty"
	case len(g) > MaxGlobLen:
		return fmt.Sprintf("is longer than %d characters", MaxGlobLen)
	case strings.HasPrefix(g, "/"):
		return "is absolute; name files relative to the loop folder"
	case strings.ContainsAny(g, "\\\x00\n"):
		return "holds a backslash or a control character; use / between folders"
	}
	for _, seg := range strings.Split(strings.TrimSuffix(g, "/"), "/") {
		switch {
		case seg == "" || seg == ".":
			return "has an empty part or \".\"; write paths like src/**/*.go"
		case seg == "..":
			return "climbs out of the loop folder (..)"
		case seg == "**":
			continue
		case strings.Contains(seg, "**"):
			return "uses ** inside a name; ** stands alone between slashes (src/**/x.go)"
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "is not a valid pattern (" + err.Error() + ")"
		}
	}
	return ""
}

// Overlap says whether a file (or folder) may match a pattern of a and a
// pattern of b. It errs towards yes: two parts with wildcards overlap
// unless their fixed beginnings or endings differ.
func Overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if globsOverlap(x, y) {
				return true
			}
		}
	}
	return false
}

func globsOverlap(x, y string) bool {
	a, b := parts(x), parts(y)
	memo := map[[2]int]bool{}
	seen := map[[2]int]bool{}
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		switch {
		case i == len(a) && j == len(b):
			return true
		case i == len(a):
			return allAny(b[j:])
		case j == len(b):
			return allAny(a[i:])
		}
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		var r bool
		switch {
		case a[i] == "**":
			r = walk(i+1, j) || walk(i, j+1)
		case b[j] == "**":
			r = walk(i, j+1) || walk(i+1, j)
		default:
			r = partsOverlap(a[i], b[j]) && walk(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return walk(0, 0)
}

// parts splits a pattern at its slashes; a folder's (ending in "/") ends
// in "**".
func parts(g string) []string {
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	return strings.Split(g, "/")
}

// allAny says whether every part is "**" (which may match nothing).
func allAny(ps []string) bool {
	for _, p := range ps {
		if p != "**" {
			return false
		}
	}
	return true
}

// meta begins a part's wildcards; metaEnd ends them (a class's "]").
const (
	meta    = `*?[\`
	metaEnd = `*?]\`
)

// partsOverlap says whether one name may match both parts: a literal part
// is matched by the other; two with wildcards overlap when their fixed
// beginnings agree and their fixed endings agree.
func partsOverlap(p, q string) bool {
	pm, qm := strings.ContainsAny(p, meta), strings.ContainsAny(q, meta)
	switch {
	case !pm && !qm:
		return p == q
	case !pm:
		ok, _ := path.Match(q, p)
		return ok
	case !qm:
		ok, _ := path.Match(p, q)
		return ok
	}
	pp, qp := p[:strings.IndexAny(p, meta)], q[:strings.IndexAny(q, meta)]
	ps, qs := p[strings.LastIndexAny(p, metaEnd)+1:], q[strings.LastIndexAny(q, metaEnd)+1:]
	return (strings.HasPrefix(pp, qp) || strings.HasPrefix(qp, pp)) && (strings.HasSuffix(ps, qs) || strings.HasSuffix(qs, ps))
}
