package guard

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// goTestSupport finds the Go packages of the folder that only tests use:
// imported from _test.go files and from no other package's code, save
// other such packages (an assertion helper and what it imports). Their
// files are test code: the go-test-support rule protects them and the
// clean room puts them back. It returns their folders (relative, with
// slashes; "." for the top).
//
// A package that is product code is never test support, whoever imports
// it (see goProductPackage): one with _test.go files of its own, or a
// public one (outside internal/, not named as test support) with exported
// API, such as a library's opt-in subpackage that nothing in the module
// imports but its tests.
func goTestSupport(dir string, files []string) map[string]bool {
	mods := map[string]string{} // folder of a go.mod → module path
	for _, f := range files {
		if path.Base(f) == "go.mod" {
			if m := modulePath(filepath.Join(dir, filepath.FromSlash(f))); m != "" {
				mods[path.Dir(f)] = m
			}
		}
	}
	if len(mods) == 0 {
		return nil
	}
	importPath := func(folder string) string {
		for d := folder; ; d = path.Dir(d) {
			if m, ok := mods[d]; ok {
				if d == folder {
					return m
				}
				rel := strings.TrimPrefix(folder, d+"/")
				if d == "." {
					rel = folder
				}
				return m + "/" + rel
			}
			if d == "." || d == "/" {
				return ""
			}
		}
	}
	folderOf := map[string]string{}       // import path → folder
	testUsed := map[string]bool{}         // imported by a test file
	ownTests := map[string]bool{}         // has _test.go files of its own
	sources := map[string][]string{}      // import path → its non-test files
	users := map[string]map[string]bool{} // import path → packages whose code imports it
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || underDefaultSkipped(f) {
			continue
		}
		folder := path.Dir(f)
		pkg := importPath(folder)
		if pkg == "" {
			continue
		}
		folderOf[pkg] = folder
		af, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(f)), nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		test := strings.HasSuffix(f, "_test.go")
		if test {
			ownTests[pkg] = true
		} else {
			sources[pkg] = append(sources[pkg], f)
		}
		for _, im := range af.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			if test {
				testUsed[p] = true
				continue
			}
			if users[p] == nil {
				users[p] = map[string]bool{}
			}
			users[p][pkg] = true
		}
	}
	// Every package of ours that something imports, less those the
	// deliverable's code imports (directly, or through a package that
	// is not test support), until nothing changes: what stays is
	// reached from test files only (the import graph has no cycles).
	cand := map[string]bool{}
	for p := range folderOf {
		if (testUsed[p] || len(users[p]) > 0) && !goProductPackage(dir, folderOf[p], ownTests[p], sources[p]) {
			cand[p] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for p := range cand {
			for u := range users[p] {
				if u != p && !cand[u] {
					delete(cand, p)
					changed = true
					break
				}
			}
		}
	}
	out := map[string]bool{}
	for p := range cand {
		out[folderOf[p]] = true
	}
	return out
}

// goProductPackage says whether the package in folder is product code
// rather than test support: it has _test.go files of its own (code that
// is tested is code the project ships), or it is public (no internal/ in
// its folder, and its folder's name does not say test, as testutil or
// xtest do) and declares exported API.
func goProductPackage(dir, folder string, ownTests bool, sources []string) bool {
	if ownTests {
		return true
	}
	for _, seg := range strings.Split(folder, "/") {
		if seg == "internal" {
			return false
		}
	}
	if strings.Contains(strings.ToLower(path.Base(folder)), "test") {
		return false
	}
	fset := token.NewFileSet()
	for _, f := range sources {
		af, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(f)), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range af.Decls {
			if goDeclExported(d) {
				return true
			}
		}
	}
	return false
}

// goDeclExported says whether a top-level declaration declares an
// exported name (a method counts only on an exported type).
func goDeclExported(d ast.Decl) bool {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return false
		}
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return true
		}
		t := d.Recv.List[0].Type
		for {
			switch x := t.(type) {
			case *ast.StarExpr:
				t = x.X
				continue
			case *ast.IndexExpr:
				t = x.X
				continue
			case *ast.IndexListExpr:
				t = x.X
				continue
			case *ast.Ident:
				return x.IsExported()
			}
			return false
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					return true
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						return true
					}
				}
			}
		}
	}
	return false
}

func modulePath(gomod string) string {
	data, err := ReadBounded(gomod, 1<<20)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// pythonModuleRun finds `python -m NAME` in a command.
var pythonModuleRun = regexp.MustCompile(`(?:^|[\s;&|(])(?:\S*/)?(?:python[0-9.]*|py)\s+(?:-[A-Za-z]+\s+)*-m\s*([A-Za-z_][A-Za-z0-9_]*)`)

// shadowable are the modules the checks run with `python -m NAME`: a new
// NAME.py or NAME/ at the top of the loop folder would be run instead of
// the real one (the working folder comes first on Python's path).
func shadowable(cmds ...[]string) map[string]bool {
	out := map[string]bool{}
	for _, list := range cmds {
		for _, c := range list {
			for _, m := range pythonModuleRun.FindAllStringSubmatch(c, -1) {
				out[m[1]] = true
			}
		}
	}
	return out
}

// shadows says whether rel (a file that did not exist at the start) would
// shadow a module a check runs with `python -m`, or one the checks import
// (shadowsImported: the standard library's, a test runner's, an installed
// distribution's a test file imports), at the top of the folder; or, for
// the last, in a folder pytest puts first on Python's path.
func (r *ProtectRules) shadows(rel string) (string, bool) {
	top, _, nested := strings.Cut(rel, "/")
	name := strings.TrimSuffix(top, ".py")
	if !nested && name == top || r.shadowAtStart[top] {
		return r.shadowsBelow(rel) // not a module at the top, or the project's own
	}
	if r.shadow[name] {
		return name, true
	}
	// A folder is a package only with Python in it: a new html/ or site/
	// of other files shadows nothing.
	if (!nested || strings.HasSuffix(rel, ".py")) && r.shadowsImported("", name) {
		return name, true
	}
	return r.shadowsBelow(rel)
}

// shadowsBelow is shadows for a path below the top: NAME.py or
// NAME/__init__.py in a folder of test files pytest puts on Python's path,
// NAME a module the checks import, new there.
func (r *ProtectRules) shadowsBelow(rel string) (string, bool) {
	dir, base := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	name := strings.TrimSuffix(base, ".py")
	switch {
	case base == "__init__.py" && strings.Contains(dir, "/"):
		dir, name = path.Dir(dir), path.Base(dir)
	case name == base || base == "__init__.py":
		return "", false // not a module; a package at the top is shadows' business
	}
	if dir == "" || !r.shadowsImported(dir, name) {
		return "", false
	}
	if r.pyPackageAtStart(path.Join(dir, name)) {
		return "", false // the project's own package
	}
	return name, true
}

// RunnerFile says whether a test runner may load rel: a test file, test
// data, test support or runner configuration of any ecosystem (whether the
// folder showed that ecosystem or not), or a new module named like one a
// check runs with `python -m`. protect_except frees a file from it, as
// from the default rules; dependency and build folders are not looked
// into.
func (r *ProtectRules) RunnerFile(rel string) bool {
	if underDefaultSkipped(rel) {
		return false
	}
	for _, g := range r.l.ProtectExcept {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return false
		}
	}
	if _, ok := r.shadows(rel); ok {
		return true
	}
	if strings.HasSuffix(rel, ".go") && r.support[path.Dir(rel)] {
		return true
	}
	for _, dr := range defaultRules {
		if dr.matches(rel, r.crates) {
			return true
		}
	}
	return false
}

// RunnerFiles is what the clean room knows of the loop folder at the
// loop's start: its runner files and its top-level names (a module a check
// runs with `python -m` that was there is the project's own).
type RunnerFiles struct {
	Files []string `json:"files"`
	Top   []string `json:"top"`
}

func (r *ProtectRules) runnerFiles() RunnerFiles {
	out := RunnerFiles{Files: []string{}, Top: []string{}}
	for _, f := range r.files {
		if r.RunnerFile(f) {
			out.Files = append(out.Files, f)
		}
	}
	for n := range r.shadowAtStart {
		out.Top = append(out.Top, n)
	}
	sort.Strings(out.Top)
	return out
}

// Walked lists every file the rules' walk found (slash-separated,
// relative to the loop's folder), in the walk's order.
func (r *ProtectRules) Walked() []string { return r.files }

// SetTopAtStart says which top-level names the loop folder held at the
// loop's start (RunnerFiles.Top): a module a check runs with `python -m`
// among them is the project's own, not one that shadows it.
func (r *ProtectRules) SetTopAtStart(names []string) {
	r.shadowAtStart = map[string]bool{}
	for _, n := range names {
		r.shadowAtStart[n] = true
	}
}
