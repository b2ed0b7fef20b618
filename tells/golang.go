package tells

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
)

// goTestFlags are the test binary's flags after "test." (go help testflag).
var goTestFlags = map[string]bool{
	"v": true, "run": true, "skip": true, "bench": true, "benchtime": true, "benchmem": true, "count": true,
	"cover": true, "coverprofile": true, "covermode": true, "coverpkg": true, "cpu": true, "failfast": true,
	"fullpath": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true, "fuzzcachedir": true,
	"fuzzworker": true, "json": true, "list": true, "parallel": true, "short": true, "shuffle": true,
	"timeout": true, "testlogfile": true, "paniconexit0": true, "gocoverdir": true, "outputdir": true,
	"cpuprofile": true, "memprofile": true, "memprofilerate": true, "blockprofile": true,
	"blockprofilerate": true, "mutexprofile": true, "mutexprofilefraction": true, "trace": true,
	"benchtime=": true,
}

// goFraming are the pieces of go test's own output a non-test string has
// no reason to hold.
var goFraming = []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP",
	"PASS\nok", "ok  \t", "\x16", `"Action":"pass"`, `"Action": "pass"`, `"Action":"run"`, `"Action": "run"`}

type goScan struct {
	fset    *token.FileSet
	src     []byte
	imports map[string]string // local name → import path
	dots    map[string]bool   // import paths imported with "."
	tells   []Tell
	spans   [][2]int // the byte ranges of tells, so a tell inside another of its kind is not repeated
	usesArg bool     // the file reads os.Args or os.Executable
	// nonConst holds the sums constString found not constant, so that a
	// long chain of + is folded in linear time.
	nonConst map[ast.Expr]bool
	// reading holds the constants a program compares or searches with
	// (strings.HasPrefix(line, "--- PASS"), arg == "-test.v", a case
	// value): a reader of a runner's output, not a printer of it.
	reading map[ast.Expr]bool
	// exiters are the package's top-level functions that exit the
	// process, themselves or through others of the package's functions.
	exiters map[string]bool
	// values are the package-level constants and variables with a
	// constant initializer (name → its expression), folded like literals.
	values map[string]ast.Expr
	// folding counts the names being folded (a bound on a cycle).
	folding int
	pkg     *goPackage
}

func scanGo(src []byte, siblings func() map[string][]byte) []Tell {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "src.go", src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		line, col, msg := 1, 1, err.Error()
		if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
			line, col, msg = el[0].Pos.Line, el[0].Pos.Column, el[0].Msg
		}
		return []Tell{{Line: line, Column: col, Kind: Unreadable, What: excerpt(msg)}}
	}
	s := newGoScan(fset, src, f)
	s.values = packageValues(f)
	s.pkg = s.packageOf(f, siblings)
	s.exiters = s.pkg.exiters
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			early := d.Recv == nil && d.Name.Name == "init"
			s.walk(d, early)
		case *ast.GenDecl:
			// A package-level var's initializer runs before main and
			// before the tests.
			s.walk(d, d.Tok == token.VAR)
		}
	}
	s.contextReads(f)
	return s.tells
}

// newGoScan reads f's imports and whether it reads os.Args.
func newGoScan(fset *token.FileSet, src []byte, f *ast.File) *goScan {
	s := &goScan{fset: fset, src: src, imports: map[string]string{}, dots: map[string]bool{}, nonConst: map[ast.Expr]bool{}, reading: map[ast.Expr]bool{}}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			s.dots[path] = true
			continue
		}
		s.imports[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && (s.is(sel, "os", "Args") || s.is(sel, "os", "Executable")) {
			s.usesArg = true
		}
		return true
	})
	return s
}

func (s *goScan) add(n ast.Node, k Kind) {
	p := s.fset.Position(n.Pos())
	end := s.fset.Position(n.End()).Offset
	start := p.Offset
	if end > len(s.src) || end < start {
		end = start
	}
	// A nested tell comes right after its parent (ast.Inspect goes
	// parents first): looking back a few is enough and keeps this linear.
	for i := len(s.spans) - 1; i >= 0 && i >= len(s.spans)-8; i-- {
		if sp := s.spans[i]; s.tells[i].Kind == k && start >= sp[0] && start < sp[1] {
			return
		}
	}
	s.spans = append(s.spans, [2]int{start, end})
	s.tells = append(s.tells, Tell{Line: p.Line, Column: p.Column, Kind: k, What: excerpt(string(s.src[start:end]))})
}

// is reports whether sel is pkg.name for the package at import path pkg.
func (s *goScan) is(sel *ast.SelectorExpr, pkg, name string) bool {
	id, ok := sel.X.(*ast.Ident)
	return ok && sel.Sel.Name == name && s.imports[id.Name] == pkg
}

// isFunc reports whether e names pkg.name (qualified, or bare under a dot
// import).
func (s *goScan) isFunc(e ast.Expr, pkg, name string) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return s.is(e, pkg, name)
	case *ast.Ident:
		return s.dots[pkg] && e.Name == name
	case *ast.ParenExpr:
		return s.isFunc(e.X, pkg, name)
	}
	return false
}

func (s *goScan) walk(root ast.Node, early bool) {
	ast.Inspect(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if s.is(n, "testing", "Testing") {
				s.add(n, AsksIfUnderTest)
				return false
			}
		case *ast.Ident:
			if s.dots["testing"] && n.Name == "Testing" {
				s.add(n, AsksIfUnderTest)
			}
		case *ast.CallExpr:
			s.markReading(n)
			s.call(n, early)
		case *ast.CaseClause:
			for _, e := range n.List {
				s.mark(e)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				s.mark(n.X)
				s.mark(n.Y)
			}
			if n.Op == token.ADD {
				if v, ok := s.constString(n); ok {
					s.str(n, v)
					return false
				}
			}
		case *ast.BasicLit:
			switch n.Kind {
			case token.STRING:
				if v, err := strconv.Unquote(n.Value); err == nil {
					s.str(n, v)
				}
			case token.CHAR:
				if v, _, _, err := strconv.UnquoteChar(strings.Trim(n.Value, "'"), '\''); err == nil && v == 0x16 && !s.reading[n] {
					s.add(n, PrintsRunnerFraming)
				}
			}
		}
		return true
	})
}

func (s *goScan) isExit(fun ast.Expr) bool {
	return s.isFunc(fun, "os", "Exit") || s.isFunc(fun, "syscall", "Exit") || s.isFunc(fun, "runtime", "Goexit") ||
		s.isFunc(fun, "golang.org/x/sys/unix", "Exit")
}

func (s *goScan) call(c *ast.CallExpr, early bool) {
	fun := c.Fun
	if early && s.isExit(fun) {
		s.add(c, ExitsEarly)
	}
	if id, ok := fun.(*ast.Ident); early && ok && s.exiters[id.Name] {
		s.add(c, ExitsEarly)
	}
	lookup := s.isFunc(fun, "flag", "Lookup")
	if sel, ok := fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Lookup" {
		if inner, ok := sel.X.(*ast.SelectorExpr); ok && s.is(inner, "flag", "CommandLine") {
			lookup = true
		}
	}
	if lookup && len(c.Args) == 1 {
		if v, ok := s.constString(c.Args[0]); ok && strings.HasPrefix(v, "test.") {
			s.add(c, AsksIfUnderTest)
		}
	}
	// ".test" beside os.Args / os.Executable in one call: the test
	// binary's name (strings.HasSuffix(os.Args[0], ".test")). The name of
	// another process (read from /proc) compared with ".test" is not.
	if s.usesArg {
		test, self := false, false
		for _, a := range c.Args {
			if v, ok := s.constString(a); ok && v == ".test" {
				test = true
			} else if s.mentionsSelf(a) {
				self = true
			}
		}
		if test && self {
			s.add(c, AsksIfUnderTest)
		}
	}
}

// mentionsSelf reports whether e reads os.Args or calls os.Executable.
func (s *goScan) mentionsSelf(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && (s.is(sel, "os", "Args") || s.is(sel, "os", "Executable")) {
			found = true
		}
		return !found
	})
	return found
}

// maxFold is the most bytes of a folded constant kept: enough to see a
// tell, and a bound on the work for a hostile chain of sums.
const maxFold = 1 << 14

// constString folds a string literal or a sum of them (a sum longer than
// maxFold is cut there).
func (s *goScan) constString(e ast.Expr) (string, bool) {
	var b strings.Builder
	ok := s.fold(e, &b)
	return b.String(), ok
}

func (s *goScan) fold(e ast.Expr, b *strings.Builder) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return false
		}
		v, err := strconv.Unquote(e.Value)
		if err != nil {
			return false
		}
		if room := maxFold - b.Len(); room > 0 {
			b.WriteString(v[:min(len(v), room)])
		}
		return true
	case *ast.ParenExpr:
		return s.fold(e.X, b)
	case *ast.Ident:
		v, ok := s.values[e.Name]
		if !ok || s.folding > 8 {
			return false
		}
		s.folding++
		defer func() { s.folding-- }()
		return s.fold(v, b)
	case *ast.BinaryExpr:
		if e.Op != token.ADD || s.nonConst[e] {
			return false
		}
		if s.fold(e.X, b) && s.fold(e.Y, b) {
			return true
		}
		s.nonConst[e] = true
		return false
	}
	return false
}

// readingArgs are, per function of strings and bytes, the arguments it
// searches with (-1: every argument).
var readingArgs = map[string]int{"HasPrefix": 1, "HasSuffix": 1, "Contains": 1, "ContainsAny": 1, "Index": 1,
	"IndexAny": 1, "LastIndex": 1, "Count": 1, "Cut": 1, "CutPrefix": 1, "CutSuffix": 1, "TrimPrefix": 1,
	"TrimSuffix": 1, "Split": 1, "SplitN": 1, "SplitAfter": 1, "SplitAfterN": 1, "EqualFold": -1, "Compare": -1, "Equal": -1}

func (s *goScan) markReading(c *ast.CallExpr) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	arg := -2
	switch s.imports[id.Name] {
	case "strings", "bytes":
		if i, ok := readingArgs[sel.Sel.Name]; ok {
			arg = i
		}
	case "regexp":
		switch sel.Sel.Name {
		case "MustCompile", "Compile", "MatchString", "Match", "MustCompilePOSIX", "CompilePOSIX":
			arg = 0
		}
	case "slices":
		switch sel.Sel.Name {
		case "Contains", "Index":
			arg = 1
		}
	}
	for i, a := range c.Args {
		if arg == -1 || i == arg {
			s.mark(a)
		}
	}
}

// mark records e (a constant, or []byte(constant)) as read, not printed.
func (s *goScan) mark(e ast.Expr) {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr: // a conversion: []byte("…"), string(…)
			if _, conv := x.Fun.(*ast.ArrayType); conv && len(x.Args) == 1 {
				e = x.Args[0]
				continue
			}
			if id, conv := x.Fun.(*ast.Ident); conv && (id.Name == "string" || id.Name == "byte" || id.Name == "rune") && len(x.Args) == 1 {
				e = x.Args[0]
				continue
			}
		}
		break
	}
	s.reading[e] = true
}

// str judges a string constant: a test flag's name is a tell where the
// program searches or compares with it, or where the file reads os.Args (a
// program that passes -test.run to a go test it starts is not asking);
// a runner's framing is a tell unless the program only searches or
// compares with it (a reader of go test's output).
func (s *goScan) str(n ast.Expr, v string) {
	if strings.Contains(v, "-test.") || strings.HasPrefix(v, "test.") && goTestFlags[strings.SplitN(strings.TrimPrefix(v, "test."), "=", 2)[0]] {
		if s.reading[n] || s.usesArg {
			s.add(n, AsksIfUnderTest)
		}
		return
	}
	if s.reading[n] {
		return
	}
	for _, f := range goFraming {
		if strings.Contains(v, f) {
			s.add(n, PrintsRunnerFraming)
			return
		}
	}
}
