package tells

import (
	"go/ast"

	"github.com/looprinter/looprinter/srctok"
)

// Aliases made by assignment, resolved before matching: a Go package
// variable holding a function (var bye = os.Exit), a Python name bound to
// an imported module or one of its attributes (c = unittest.case,
// m = importlib.import_module("unittest.case")), a JavaScript name assigned
// a binding after its declaration (a = require('assert')), TypeScript's
// import a = require('assert'), module.require and globalThis kept in a
// variable.

// varFuncs adds to funcs each package variable of d by its name, with the
// package functions and exits its initializer names: a call through the
// variable (bye(0) for var bye = os.Exit) is a call of what it holds.
func (s *goScan) varFuncs(d *ast.GenDecl, funcs map[string]*goFunc) {
	for _, sp := range d.Specs {
		vs, ok := sp.(*ast.ValueSpec)
		if !ok || len(vs.Names) != len(vs.Values) {
			continue
		}
		for i, n := range vs.Names {
			if _, taken := funcs[n.Name]; taken || n.Name == "_" {
				continue
			}
			fn := &goFunc{}
			s.graphRefs(vs.Values[i], fn)
			funcs[n.Name] = fn
		}
	}
}

// pyAssignAliases adds to imports the names a line binds to an imported
// name: `NAME = chain` where the chain resolves through imports and is not
// itself a read of the run's context (that read is told where it is
// made), and `NAME = importlib.import_module("m")` or `__import__("m")`
// with a literal name.
func pyAssignAliases(toks []srctok.Token, imports map[string]string) {
	start := 0
	for i, t := range toks {
		if t.Kind != srctok.Newline {
			continue
		}
		line := toks[start:i]
		start = i + 1
		if len(line) < 3 || line[0].Kind != srctok.Ident || !seq(line, 1, "=") {
			continue
		}
		if m, ok := pyImportCall(line[2:], imports); ok {
			imports[line[0].Text] = m
			continue
		}
		q, end := pyChain(line, 2, imports)
		if q != "" && end == len(line) && !pyIsContextRead(q) {
			imports[line[0].Text] = q
		}
	}
}

// pyImportCall reads `importlib.import_module("m")` (through any import
// name) or `__import__("m")`: the module's dotted name.
func pyImportCall(rest []srctok.Token, imports map[string]string) (string, bool) {
	end := 1
	if !seq(rest, 0, "__import__") {
		var q string
		q, end = pyChain(rest, 0, imports)
		if q != "importlib.import_module" {
			return "", false
		}
	}
	if end+3 == len(rest) && seq(rest, end, "(") && rest[end+1].Kind == srctok.String && seq(rest, end+2, ")") {
		return rest[end+1].Value, true
	}
	return "", false
}

// pyIsContextRead says whether q is one of pyContextReads or under one.
func pyIsContextRead(q string) bool {
	for _, p := range pyContextReads {
		if under(q, p) {
			return true
		}
	}
	return false
}

// jsAssignSource is what the binding assigned at toks[i] stands for, for
// the forms jsAliases's declarations do not cover: `NAME = source` at a
// statement's start and TypeScript's `import NAME = require('m')`; name
// is "" when toks[i] starts no such form.
func jsAssignSource(toks []srctok.Token, i int, source func(int) string) (name, src string) {
	t := toks[i]
	if t.Kind != srctok.Ident || !seq(toks, i+1, "=") {
		return "", ""
	}
	if i > 0 {
		p := toks[i-1]
		switch {
		case p.Kind == srctok.Ident && p.Text == "import" && (i < 2 || toks[i-2].Text != "."):
		case p.Kind == srctok.Op && (p.Text == ";" || p.Text == "{" || p.Text == "}"):
		case p.Line < t.Line && (p.Kind != srctok.Op || p.Text == ")" || p.Text == "]"):
		default:
			return "", ""
		}
	}
	return t.Text, source(i + 2)
}

// jsModuleRequire reads module.require('m') at toks[j]: the specifier.
func jsModuleRequire(toks []srctok.Token, j int) (string, bool) {
	if !seq(toks, j, "module", ".", "require", "(") || !seq(toks, j+5, ")") || toks[j+4].Kind != srctok.String {
		return "", false
	}
	return toks[j+4].Value, true
}
