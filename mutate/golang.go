package mutate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

var negated = map[string]string{"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}

// goChunk is a slice of the file parsed on its own: src[start:end], parsed
// as prefix + that slice.
type goChunk struct {
	start, end int
	prefix     string
}

// topLevel reports whether a line opens a top-level declaration.
func topLevel(line []byte) bool {
	for _, kw := range []string{"func", "var", "const", "type", "import", "package"} {
		if len(line) > len(kw) && string(line[:len(kw)]) == kw && (line[len(kw)] == ' ' || line[len(kw)] == '(' || line[len(kw)] == '\t') {
			return true
		}
	}
	return false
}

// goChunks finds the top-level declarations that hold the wanted lines:
// from the nearest line at or above a wanted line that opens a
// declaration to the line before the next one that does.
func goChunks(src []byte, idx lineIndex, want map[int]bool) []goChunk {
	n := len(idx)
	lineText := func(l int) []byte { // 1-based
		end := len(src)
		if l < n {
			end = idx[l]
		}
		return src[idx[l-1]:end]
	}
	type span struct{ a, b int }
	var spans []span
	wanted := make([]int, 0, len(want))
	for l := range want {
		if l >= 1 && l <= n {
			wanted = append(wanted, l)
		}
	}
	sort.Ints(wanted)
	for _, l := range wanted {
		if k := len(spans); k > 0 && l <= spans[k-1].b {
			continue // inside the declaration already found
		}
		a := l
		for a > 1 && !topLevel(lineText(a)) {
			a--
		}
		b := l + 1
		for b <= n && !topLevel(lineText(b)) {
			b++
		}
		spans = append(spans, span{a, b - 1})
	}
	var merged []span
	for _, s := range spans {
		if k := len(merged); k > 0 && s.a <= merged[k-1].b+1 {
			if s.b > merged[k-1].b {
				merged[k-1].b = s.b
			}
			continue
		}
		merged = append(merged, s)
	}
	var out []goChunk
	for _, s := range merged {
		start := idx[s.a-1]
		end := len(src)
		if s.b < n {
			end = idx[s.b]
		}
		prefix := "package p;"
		if strings.HasPrefix(string(lineText(s.a)), "package") {
			prefix = ""
		}
		out = append(out, goChunk{start, end, prefix})
	}
	return out
}

type goMut struct {
	src   []byte
	idx   lineIndex
	want  map[int]bool
	fset  *token.FileSet
	base  int // offset in src of the parsed text's byte len(prefix)
	plen  int
	edits []edit
}

func goEdits(src []byte, want map[int]bool) ([]edit, error) {
	idx := newLineIndex(src)
	chunks := goChunks(src, idx, want)
	var all []edit
	whole := false
	for _, c := range chunks {
		text := append([]byte(c.prefix), src[c.start:c.end]...)
		g := &goMut{src: src, idx: idx, want: want, fset: token.NewFileSet(), base: c.start, plen: len(c.prefix)}
		f, err := parser.ParseFile(g.fset, "", text, parser.SkipObjectResolution)
		if err != nil {
			whole = true
			break
		}
		g.file(f)
		all = append(all, g.edits...)
	}
	if !whole {
		return all, nil
	}
	// A slice did not parse on its own: parse the whole file.
	g := &goMut{src: src, idx: idx, want: want, fset: token.NewFileSet()}
	f, err := parser.ParseFile(g.fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
			return nil, fmt.Errorf("%d:%d: %s", el[0].Pos.Line, el[0].Pos.Column, el[0].Msg)
		}
		return nil, err
	}
	g.file(f)
	return g.edits, nil
}

// off is a position's offset in src.
func (g *goMut) off(p token.Pos) int { return g.base + g.fset.Position(p).Offset - g.plen }

func (g *goMut) text(n ast.Node) string { return string(g.src[g.off(n.Pos()):g.off(n.End())]) }

func (g *goMut) onWanted(p token.Pos) (line, col int, ok bool) {
	line, col = g.idx.pos(g.off(p))
	return line, col, g.want[line]
}

func (g *goMut) add(from, to token.Pos, repl string, op Op, desc string) {
	line, col, ok := g.onWanted(from)
	if !ok {
		return
	}
	g.edits = append(g.edits, edit{off: g.off(from), end: g.off(to), repl: repl, line: line, col: col, op: op, desc: desc})
}

func (g *goMut) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				g.fn(d.Type, d.Body)
			}
		case *ast.GenDecl:
			if d.Tok != token.IMPORT {
				g.walk(d, nil)
			}
		}
	}
}

func (g *goMut) fn(t *ast.FuncType, body *ast.BlockStmt) {
	var results []ast.Expr
	if t.Results != nil {
		for _, f := range t.Results.List {
			n := len(f.Names)
			if n == 0 {
				n = 1
			}
			for i := 0; i < n; i++ {
				results = append(results, f.Type)
			}
		}
	}
	g.walk(body, results)
}

func (g *goMut) walk(root ast.Node, results []ast.Expr) {
	ast.Inspect(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			g.fn(n.Type, n.Body)
			return false
		case *ast.BinaryExpr:
			g.binary(n)
		case *ast.IfStmt:
			g.cond(n.Cond)
		case *ast.ForStmt:
			if n.Cond != nil {
				g.cond(n.Cond)
			}
		case *ast.ReturnStmt:
			g.ret(n, results)
		case *ast.BlockStmt:
			g.stmts(n.List)
		case *ast.CaseClause:
			g.stmts(n.Body)
		case *ast.CommClause:
			g.stmts(n.Body)
		case *ast.BasicLit:
			g.constant(n)
		case *ast.ImportSpec:
			return false
		}
		return true
	})
}

func (g *goMut) binary(b *ast.BinaryExpr) {
	op := b.Op.String()
	if to, ok := negated[op]; ok {
		g.add(b.OpPos, b.OpPos+token.Pos(len(op)), to, FlipComparison, "flip "+op+" to "+to)
	}
	if b.Op == token.LAND || b.Op == token.LOR {
		if g.text(b.X) == g.text(b.Y) {
			return // a && a is a || a
		}
		to := map[token.Token]string{token.LAND: "||", token.LOR: "&&"}[b.Op]
		g.add(b.OpPos, b.OpPos+2, to, SwapLogical, "swap "+op+" for "+to)
	}
}

func isComparison(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok {
		return false
	}
	_, cmp := negated[b.Op.String()]
	return cmp
}

func (g *goMut) cond(c ast.Expr) {
	if isComparison(c) {
		return
	}
	if u, ok := c.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		g.add(c.Pos(), c.End(), g.text(u.X), NegateCondition, "negate the condition "+short(g.text(c)))
		return
	}
	g.add(c.Pos(), c.End(), "!("+g.text(c)+")", NegateCondition, "negate the condition "+short(g.text(c)))
}

func (g *goMut) ret(r *ast.ReturnStmt, results []ast.Expr) {
	if len(r.Results) != len(results) {
		return // a bare return, or return f() of several values
	}
	for i, e := range r.Results {
		zero := g.zero(results[i])
		if zero == "" || isZero(g.text(e), zero) {
			continue
		}
		g.add(e.Pos(), e.End(), zero, ZeroReturn, "return "+short(zero)+" instead of "+short(g.text(e)))
	}
}

func isZero(text, zero string) bool {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(zero, "*new(") || zero == "nil" {
		// nil, 0, "" or false returned as a named type is its zero (or
		// does not compile as anything else).
		switch text {
		case "nil", "0", `""`, "false", "0.0":
			return true
		}
	}
	switch zero {
	case "0":
		return text == "0" || text == "0.0"
	case `""`:
		return text == `""` || text == "``"
	}
	return text == zero
}

// zero is the zero value of a result type, as Go source.
func (g *goMut) zero(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.Ident:
		switch t.Name {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
			"float32", "float64", "complex64", "complex128", "byte", "rune":
			return "0"
		case "string":
			return `""`
		case "bool":
			return "false"
		case "error", "any":
			return "nil"
		}
		return "*new(" + t.Name + ")"
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return "nil"
	case *ast.ArrayType:
		if t.Len == nil {
			return "nil"
		}
	case *ast.ParenExpr:
		return g.zero(t.X)
	case *ast.Ellipsis:
		return ""
	}
	return "*new(" + g.text(t) + ")"
}

func (g *goMut) stmts(list []ast.Stmt) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt:
			call, ok := s.X.(*ast.CallExpr)
			if !ok {
				continue
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
				continue
			}
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				continue
			}
		case *ast.IncDecStmt, *ast.SendStmt, *ast.DeferStmt, *ast.GoStmt:
		default:
			continue
		}
		g.add(s.Pos(), s.End(), "", RemoveStatement, "remove "+short(g.text(s)))
	}
}

func (g *goMut) constant(b *ast.BasicLit) {
	if b.Kind != token.INT {
		return
	}
	v, err := strconv.ParseInt(b.Value, 0, 64)
	if err != nil {
		return
	}
	to := v + 1
	if v == 1<<63-1 {
		to = v - 1
	}
	s := strconv.FormatInt(to, 10)
	g.add(b.Pos(), b.End(), s, ChangeConstant, "change "+short(b.Value)+" to "+s)
}
