package tells

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// goTestingTypes are the names of package testing a helper may take as a
// type (func Must(t *testing.T, …)): they read nothing of the run.
var goTestingTypes = map[string]bool{"T": true, "TB": true, "B": true, "F": true, "M": true, "PB": true, "BenchmarkResult": true}

// goFlagReads are package flag's functions that read the command line
// (or look a flag up): a library has no business calling them.
var goFlagReads = map[string]bool{"Lookup": true, "CommandLine": true, "Args": true, "Arg": true, "NArg": true, "NFlag": true,
	"Parse": true, "Parsed": true, "Visit": true, "VisitAll": true}

// goPackage is what the scan of one file knows of its package: its name,
// the functions that exit the process (themselves or through others of the
// package) and the functions reached from the package's initialisation
// (every init function and package-level variable's initializer, in every
// file given).
type goPackage struct {
	name    string
	exiters map[string]bool
	reached map[string]bool
}

// goFunc is one function of the package in the call graph: methods are
// keyed "." + name (a call x.m() is not resolved to a type: it reaches
// every method m of the package).
type goFunc struct {
	refs  []string // the package's functions it names (called or taken as a value)
	exits bool     // it names os.Exit, syscall.Exit or runtime.Goexit
}

// packageOf builds the package's call graph from f and the other files of
// its folder (siblings; nil: f alone). Files of another package clause
// (package x_test, a main in the same folder by mistake) and files that do
// not parse are left out.
func (s *goScan) packageOf(f *ast.File, siblings func() map[string][]byte) *goPackage {
	p := &goPackage{name: f.Name.Name, exiters: map[string]bool{}, reached: map[string]bool{}}
	funcs := map[string]*goFunc{}
	var roots []string
	add := func(sc *goScan, file *ast.File) {
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				key := d.Name.Name
				if d.Recv != nil {
					key = "." + key
				}
				if d.Recv == nil && key == "init" {
					key = "init\x00" + sc.fset.Position(d.Pos()).String()
					roots = append(roots, key)
				}
				fn := funcs[key]
				if fn == nil {
					fn = &goFunc{}
					funcs[key] = fn
				}
				sc.graphRefs(d.Body, fn)
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				key := "var\x00" + sc.fset.Position(d.Pos()).String()
				fn := &goFunc{}
				funcs[key] = fn
				roots = append(roots, key)
				sc.graphRefs(d, fn)
				sc.varFuncs(d, funcs)
			}
		}
	}
	add(s, f)
	if siblings != nil {
		names := []string{}
		files := siblings()
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") || !strings.HasSuffix(n, ".go") {
				continue
			}
			fset := token.NewFileSet()
			sf, err := parser.ParseFile(fset, n, files[n], parser.SkipObjectResolution)
			if err != nil || sf.Name.Name != f.Name.Name {
				continue
			}
			add(newGoScan(fset, files[n], sf), sf)
			for k, v := range packageValues(sf) {
				if _, ok := s.values[k]; !ok {
					s.values[k] = v
				}
			}
		}
	}
	// What exits: everything that names an exiter (linear in the names).
	callers := map[string][]string{}
	var queue []string
	for k, fn := range funcs {
		for _, r := range fn.refs {
			callers[r] = append(callers[r], k)
		}
		if fn.exits {
			p.exiters[k] = true
			queue = append(queue, k)
		}
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, c := range callers[k] {
			if !p.exiters[c] {
				p.exiters[c] = true
				queue = append(queue, c)
			}
		}
	}
	// What the initialisation reaches.
	queue = append(queue, roots...)
	for _, r := range roots {
		p.reached[r] = true
	}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		fn := funcs[k]
		if fn == nil {
			continue
		}
		for _, r := range fn.refs {
			if !p.reached[r] {
				p.reached[r] = true
				queue = append(queue, r)
			}
		}
	}
	return p
}

// graphRefs adds to fn the package functions n names and whether it names
// an exit.
func (s *goScan) graphRefs(n ast.Node, fn *goFunc) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if s.isExit(n) {
				fn.exits = true
				return false
			}
			if id, ok := n.X.(*ast.Ident); ok && s.imports[id.Name] != "" {
				return false
			}
			fn.refs = append(fn.refs, "."+n.Sel.Name)
		case *ast.Ident:
			if s.isExit(n) {
				fn.exits = true
			}
			fn.refs = append(fn.refs, n.Name)
		}
		return true
	})
}

// packageValues are f's package-level constants and variables whose
// initializer is an expression of their own (name → expression).
func packageValues(f *ast.File) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST && g.Tok != token.VAR {
			continue
		}
		for _, sp := range g.Specs {
			vs, ok := sp.(*ast.ValueSpec)
			if !ok || len(vs.Names) != len(vs.Values) {
				continue
			}
			for i, n := range vs.Names {
				out[n.Name] = vs.Values[i]
			}
		}
	}
	return out
}

// contextReads adds the file's reads of the process's identity or its
// test context (ReadsRunContext), the assignments into package testing
// (PatchesTestFramework) and the exits of functions the package's
// initialisation reaches (ExitsEarly).
func (s *goScan) contextReads(f *ast.File) {
	library := f.Name.Name != "main"
	ownPid := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && (s.is(sel, "os", "Getpid") || s.is(sel, "syscall", "Getpid") || s.is(sel, "golang.org/x/sys/unix", "Getpid")) {
			ownPid = true
		}
		return !ownPid
	})
	asked := map[token.Pos]bool{}
	for _, t := range s.tells {
		if t.Kind == AsksIfUnderTest {
			asked[s.fset.File(f.Pos()).LineStart(t.Line)+token.Pos(t.Column-1)] = true
		}
	}
	read := func(n ast.Node) {
		if !asked[n.Pos()] {
			s.add(n, ReadsRunContext)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch path, name := s.imports[id.Name], n.Sel.Name; {
			case path == "os" && (name == "Args" || name == "Executable"),
				path == "flag" && library && goFlagReads[name],
				path == "testing" && !goTestingTypes[name],
				path == "runtime" && (name == "Caller" || name == "Callers" || name == "Stack"),
				path == "runtime/debug" && name == "Stack":
				read(n)
				return false
			}
		case *ast.Ident:
			if s.dots["os"] && (n.Name == "Args" || n.Name == "Executable") || s.dots["testing"] && n.Name != "_" && !goTestingTypes[n.Name] && ast.IsExported(n.Name) && n.Name != "Testing" {
				read(n)
			}
		case *ast.BinaryExpr:
			if v, ok := s.constString(n); ok && n.Op == token.ADD {
				if procSelf(v, ownPid) {
					read(n)
				}
				return false
			}
		case *ast.BasicLit:
			if v, ok := s.constString(n); ok && procSelf(v, ownPid) {
				read(n)
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if s.rootImport(l) == "testing" {
					s.add(n, PatchesTestFramework)
					break
				}
			}
		case *ast.FuncDecl:
			key := n.Name.Name
			if n.Recv != nil {
				key = "." + key
			}
			if n.Body != nil && key != "init" && s.pkg.reached[key] { // a method's key starts with "."
				s.exitsIn(n.Body)
			}
		}
		return true
	})
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if fields := strings.Fields(c.Text); len(fields) >= 3 && fields[0] == "//go:linkname" && linksToContext(fields[2]) {
				s.add(c, ReadsRunContext)
			}
		}
	}
}

// exitsIn adds an ExitsEarly tell at each exit in body (a function the
// package's initialisation reaches).
func (s *goScan) exitsIn(body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && s.isExit(c.Fun) {
			s.add(c, ExitsEarly)
		}
		return true
	})
}

// rootImport is the import path of the package e is a selector chain
// into (testing.X.y → "testing"), or "".
func (s *goScan) rootImport(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				return s.imports[id.Name]
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// procSelf says whether a constant names the process's own /proc entry:
// /proc/self, /proc/thread-self, or any /proc/ path in a file that asks its
// own process id.
func procSelf(v string, ownPid bool) bool {
	return strings.Contains(v, "/proc/self") || strings.Contains(v, "/proc/thread-self") || ownPid && strings.Contains(v, "/proc/")
}

// linksToContext says whether a //go:linkname target reaches into the
// test framework or the process's arguments.
func linksToContext(target string) bool {
	return strings.HasPrefix(target, "testing.") || strings.HasPrefix(target, "flag.") || strings.HasPrefix(target, "os.") ||
		target == "runtime.os_args" || target == "runtime.argslice" || target == "runtime.runtime_args"
}
