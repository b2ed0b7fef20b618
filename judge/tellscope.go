package judge

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/checkcmd"
	"github.com/looprinter/looprinter/tells"
)

// A read of the run's context (tells.ReadsRunContext: os.Args,
// sys.modules, process.argv …) is refused in a library the checks import
// and only reported to the audit elsewhere: a program's entry point reads
// its arguments honestly. Which files are such a library:
//
//   - Go: every file of a package other than main.
//   - Python and JavaScript/TypeScript: the modules the checks reach by
//     their imports as written, from the project's test files, the files
//     a check line runs, the modules it names with -m and the holdout
//     files. A Python dotted name is matched against every module whose
//     path ends with it (and its packages' __init__.py); a JavaScript
//     specifier is resolved from the importing file (with the usual
//     extensions and index files).
//
// The reading is conservative: where it cannot tell (an import computed at
// run time, eval or exec, a check that runs inline code with -c or -e, a
// bare specifier naming the project's own package or a path alias, a
// project too large to list), every module counts as imported. What it
// cannot see: imports made through a plugin system or an entry point
// (pytest's -p, a package's entry points), a module loaded by a file name
// computed at run time that is not in a file it read as dynamic, and
// imports in generated code it was not shown.

// Tree is a view of the loop folder as a run's change would leave it.
type Tree struct {
	// Read reads a file (ok false: there is none, or it is not a regular
	// file).
	Read func(rel string) ([]byte, bool)
	// List lists a folder's files and folders by name ("" the top).
	List func(dir string) (files, dirs []string)
}

// maxScopeFiles bounds the files listed to find what the checks import;
// past it every module counts as imported.
const maxScopeFiles = 20000

// TellScope splits a file's new tells into the refused and the noted (for
// the audit only). It reads the tree only when a tell needs it.
type TellScope struct {
	j    *Judge
	tree Tree
	// reached is the set of Python/JS files the checks import (nil: not
	// read yet); all says every file counts.
	reached map[string]bool
	all     bool
	// dirs keeps each folder's Go files read for Siblings, once.
	dirs map[string]map[string][]byte
}

// NewTellScope is the scope of the tells of a change that leaves the
// folder as tree.
func (j *Judge) NewTellScope(tree Tree) *TellScope { return &TellScope{j: j, tree: tree} }

// Siblings returns the other files of rel's folder in the tree, for
// tells.ScanIn (Go only; nil otherwise).
func (s *TellScope) Siblings(rel string) func() map[string][]byte {
	if tells.Language(rel) != "go" || s.tree.List == nil {
		return nil
	}
	return func() map[string][]byte {
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		all, ok := s.dirs[dir]
		if !ok {
			all = map[string][]byte{}
			files, _ := s.tree.List(dir)
			for _, n := range files {
				if !strings.HasSuffix(n, ".go") {
					continue
				}
				if b, ok := s.tree.Read(path.Join(dir, n)); ok && len(b) <= maxTellBytes {
					all[n] = b
				}
			}
			if s.dirs == nil {
				s.dirs = map[string]map[string][]byte{}
			}
			s.dirs[dir] = all
		}
		out := make(map[string][]byte, len(all))
		for n, b := range all {
			if n != path.Base(rel) {
				out[n] = b
			}
		}
		return out
	}
}

// Split divides ts (the new tells of rel, whose source is cur) into those
// that refuse the change and those only reported to the audit.
func (s *TellScope) Split(rel string, cur []byte, ts []tells.Tell) (refused, noted []tells.Tell) {
	for _, t := range ts {
		if !tells.LibraryOnly(t.Kind) || s.library(rel, cur) {
			refused = append(refused, t)
		} else {
			noted = append(noted, t)
		}
	}
	return refused, noted
}

var goPackageClause = regexp.MustCompile(`(?m)^package\s+(\w+)`)

// library says whether rel is a library the checks import.
func (s *TellScope) library(rel string, cur []byte) bool {
	switch tells.Language(rel) {
	case "go":
		m := goPackageClause.FindSubmatch(cur)
		return m == nil || string(m[1]) != "main"
	case "python", "js":
		s.read()
		return s.all || s.reached[rel]
	}
	return true
}

// read finds the files the checks import, once.
func (s *TellScope) read() {
	if s.reached != nil || s.all {
		return
	}
	s.reached = map[string]bool{}
	files, ok := s.listAll()
	if !ok || s.tree.Read == nil {
		s.all = true
		return
	}
	ix := newModIndex(files)
	for _, pj := range ix.own {
		var m struct {
			Name string `json:"name"`
		}
		if b, ok := s.tree.Read(pj); ok && json.Unmarshal(b, &m) == nil && m.Name != "" {
			ix.names = append(ix.names, m.Name)
		}
	}
	var queue []string
	push := func(f string) {
		if !s.reached[f] {
			s.reached[f] = true
			queue = append(queue, f)
		}
	}
	for _, f := range files {
		if tells.Language(f) != "" && tells.IsTestFile(f) {
			push(f)
		}
	}
	holdout := map[string]bool{}
	for _, h := range s.j.Holdouts() {
		holdout[h] = true
		push(h)
	}
	if s.checkRoots(ix, push) {
		s.all = true
		return
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		src, ok := s.tree.Read(f)
		if !ok && holdout[f] && s.j.Dir != "" {
			// Hidden from the run's view: read where the judge keeps it.
			b, err := os.ReadFile(filepath.Join(s.j.Dir, filepath.FromSlash(f)))
			src, ok = b, err == nil
		}
		if !ok {
			continue
		}
		mods, dynamic := tells.Imports(f, src)
		if dynamic {
			s.all = true
			return
		}
		for _, m := range mods {
			targets, unknown := ix.resolve(f, m)
			if unknown {
				s.all = true
				return
			}
			for _, t := range targets {
				push(t)
			}
		}
	}
}

var inlineCode = regexp.MustCompile(`(^|\s)(-c|-e|--eval|-p|--print)(\s|$)`)

// checkRoots adds the files and modules the check lines run; true when a
// line runs inline code (every module counts).
func (s *TellScope) checkRoots(ix *modIndex, push func(string)) bool {
	l := s.j.spec()
	lines := append(append([]string{}, l.Verify...), l.ObjectiveVerify...)
	for _, line := range lines {
		if inlineCode.MatchString(line) {
			return true
		}
		if progs, err := checkcmd.Programs(line); err == nil {
			for _, p := range progs {
				push(strings.TrimPrefix(path.Clean(p.Path), "./"))
			}
		}
		words := strings.Fields(line)
		for i, w := range words {
			if i > 0 && words[i-1] == "-m" {
				for _, t := range ix.py[strings.Trim(w, `'"`)] {
					push(t)
				}
			}
		}
	}
	return false
}

// listAll lists the tree's source files (ok false: more than
// maxScopeFiles, or no way to list).
func (s *TellScope) listAll() ([]string, bool) {
	if s.tree.List == nil {
		return nil, false
	}
	var out []string
	dirs := []string{""}
	seen := 0
	for len(dirs) > 0 {
		d := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		files, sub := s.tree.List(d)
		if seen += len(files) + len(sub); seen > maxScopeFiles {
			return nil, false
		}
		for _, n := range files {
			if tells.Language(n) != "" || n == "package.json" {
				out = append(out, path.Join(d, n))
			}
		}
		for _, n := range sub {
			switch n {
			case "node_modules", ".git", "vendor", ".venv", "venv", "site-packages", "__pycache__", "working-records":
				continue
			}
			dirs = append(dirs, path.Join(d, n))
		}
	}
	sort.Strings(out)
	return out, true
}

// modIndex finds the files an import names.
type modIndex struct {
	py    map[string][]string // dotted suffix → Python files
	files map[string]bool
	own   []string // the project's package.json files
	names []string // the names they give the project's packages
}

func newModIndex(files []string) *modIndex {
	ix := &modIndex{py: map[string][]string{}, files: map[string]bool{}}
	for _, f := range files {
		ix.files[f] = true
		if path.Base(f) == "package.json" {
			ix.own = append(ix.own, f)
		}
		if tells.Language(f) != "python" {
			continue
		}
		mod := strings.TrimSuffix(strings.TrimSuffix(f, ".py"), ".pyw")
		parts := strings.Split(mod, "/")
		if parts[len(parts)-1] == "__init__" {
			parts = parts[:len(parts)-1]
		}
		for i := range parts {
			k := strings.Join(parts[i:], ".")
			ix.py[k] = append(ix.py[k], f)
		}
	}
	return ix
}

// resolve gives the files import m of file from reaches; unknown when it
// cannot tell (a JavaScript bare specifier that may be the project's own).
func (ix *modIndex) resolve(from, m string) (out []string, unknown bool) {
	dir := path.Dir(from)
	if tells.Language(from) == "python" {
		if strings.HasPrefix(m, ".") {
			n := len(m) - len(strings.TrimLeft(m, "."))
			d := dir
			for k := 1; k < n; k++ {
				d = path.Dir(d)
			}
			rest := strings.ReplaceAll(strings.TrimLeft(m, "."), ".", "/")
			for _, c := range []string{path.Join(d, rest) + ".py", path.Join(d, rest, "__init__.py"), path.Join(d, "__init__.py")} {
				if ix.files[c] {
					out = append(out, c)
				}
			}
			return out, false
		}
		parts := strings.Split(m, ".")
		for i := len(parts); i > 0; i-- {
			out = append(out, ix.py[strings.Join(parts[:i], ".")]...)
		}
		return out, false
	}
	if !strings.HasPrefix(m, ".") && !strings.HasPrefix(m, "/") {
		if strings.HasPrefix(m, "@/") || strings.HasPrefix(m, "~/") || strings.HasPrefix(m, "#") {
			return nil, true
		}
		for _, n := range ix.names {
			if m == n || strings.HasPrefix(m, n+"/") {
				return nil, true
			}
		}
		return nil, false // a dependency's, in node_modules
	}
	base := path.Join(dir, m)
	for _, ext := range []string{"", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx", "/index.js", "/index.ts", "/index.mjs", "/index.cjs"} {
		if ix.files[base+ext] {
			out = append(out, base+ext)
		}
	}
	// A .js specifier of a TypeScript file (import './x.js' for x.ts).
	if strings.HasSuffix(base, ".js") {
		for _, ext := range []string{".ts", ".tsx", ".mts"} {
			if c := strings.TrimSuffix(base, ".js") + ext; ix.files[c] {
				out = append(out, c)
			}
		}
	}
	return out, false
}
