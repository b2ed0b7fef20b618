package mutate

import (
	"strconv"
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

var pyKeywords = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true, "import": true,
	"in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true, "match": true, "case": true, "type": true}

var jsKeywords = map[string]bool{"break": true, "case": true, "catch": true, "class": true, "const": true, "continue": true,
	"debugger": true, "default": true, "delete": true, "do": true, "else": true, "export": true, "extends": true,
	"finally": true, "for": true, "function": true, "if": true, "import": true, "in": true, "instanceof": true, "let": true,
	"new": true, "return": true, "switch": true, "throw": true, "try": true, "typeof": true, "var": true, "void": true,
	"while": true, "with": true, "yield": true, "async": true, "static": true, "get": true, "set": true, "type": true,
	"interface": true, "enum": true, "declare": true, "namespace": true, "module": true, "abstract": true, "public": true,
	"private": true, "protected": true, "readonly": true, "override": true, "implements": true, "package": true}

var jsNegated = map[string]string{"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "==", "===": "!==", "!==": "==="}

type tokMut struct {
	src   []byte
	toks  []srctok.Token
	want  map[int]bool
	py    bool
	edits []edit
}

func tokEdits(src []byte, want map[int]bool, py bool) ([]edit, error) {
	var toks []srctok.Token
	var err error
	if py {
		toks, err = srctok.Python(src)
	} else {
		toks, err = srctok.JS(src)
	}
	if err != nil {
		return nil, err
	}
	m := &tokMut{src: src, toks: toks, want: want, py: py}
	for i, t := range toks {
		if !want[t.Line] {
			continue
		}
		m.at(i)
	}
	return m.edits, nil
}

func (m *tokMut) add(i int, off, end int, repl string, op Op, desc string) {
	t := m.toks[i]
	m.edits = append(m.edits, edit{off: off, end: end, repl: repl, line: t.Line, col: t.Col, op: op, desc: desc})
}

func (m *tokMut) text(a, b int) string { // tokens a..b-1, as in the source
	if a >= b {
		return ""
	}
	return string(m.src[m.toks[a].Off:m.toks[b-1].End])
}

// spaced reports whether toks[i] has a space or line end on both sides.
func (m *tokMut) spaced(i int) bool {
	t := m.toks[i]
	before := t.Off > 0 && strings.IndexByte(" \t\n\r", m.src[t.Off-1]) >= 0
	after := t.End < len(m.src) && strings.IndexByte(" \t\n\r", m.src[t.End]) >= 0
	return before && after
}

func (m *tokMut) at(i int) {
	t := m.toks[i]
	switch t.Kind {
	case srctok.Op:
		if to, ok := jsNegated[t.Text]; ok && !(m.py && len(t.Text) == 3) {
			if !m.py && (t.Text == "<" || t.Text == ">") && !m.spaced(i) {
				return // a type argument or a JSX tag, not a comparison
			}
			m.add(i, t.Off, t.End, to, FlipComparison, "flip "+t.Text+" to "+to)
		}
		if !m.py && (t.Text == "&&" || t.Text == "||") {
			to := map[string]string{"&&": "||", "||": "&&"}[t.Text]
			m.add(i, t.Off, t.End, to, SwapLogical, "swap "+t.Text+" for "+to)
		}
	case srctok.Number:
		m.constant(i)
	case srctok.Ident:
		if m.py {
			m.pyIdent(i)
		} else {
			m.jsIdent(i)
		}
	}
}

func (m *tokMut) constant(i int) {
	t := m.toks[i]
	text := strings.ReplaceAll(t.Text, "_", "")
	if strings.ContainsAny(text, ".eEjJnN") && !strings.HasPrefix(strings.ToLower(text), "0x") {
		return
	}
	if strings.HasSuffix(text, "n") { // BigInt
		return
	}
	if len(text) > 1 && text[0] == '0' && text[1] >= '0' && text[1] <= '9' {
		return // a legacy octal literal
	}
	v, err := strconv.ParseInt(text, 0, 64)
	if err != nil {
		return
	}
	to := v + 1
	if v == 1<<63-1 {
		to = v - 1
	}
	s := strconv.FormatInt(to, 10)
	m.add(i, t.Off, t.End, s, ChangeConstant, "change "+short(t.Text)+" to "+s)
}

// --- Python

func (m *tokMut) pyIdent(i int) {
	t := m.toks[i]
	toks := m.toks
	switch t.Text {
	case "and", "or":
		to := map[string]string{"and": "or", "or": "and"}[t.Text]
		m.add(i, t.Off, t.End, to, SwapLogical, "swap "+t.Text+" for "+to)
	case "is":
		if i+1 < len(toks) && toks[i+1].Text == "not" && toks[i+1].Kind == srctok.Ident {
			m.add(i, t.Off, toks[i+1].End, "is", FlipComparison, "flip is not to is")
		} else {
			m.add(i, t.Off, t.End, "is not", FlipComparison, "flip is to is not")
		}
	case "if", "elif", "while":
		if !t.LineStart && t.Text == "if" && !(i > 0 && toks[i-1].Text == "else") {
			return // a conditional expression or a comprehension's filter
		}
		end := i + 1
		for end < len(toks) && !(toks[end].Text == ":" && toks[end].Depth == t.Depth) && toks[end].Kind != srctok.Newline {
			if toks[end].Text == "lambda" {
				return
			}
			end++
		}
		if end >= len(toks) || toks[end].Text != ":" || end == i+1 {
			return
		}
		m.negate(i, i+1, end, "not ", "not (", ")")
	case "return":
		end := i + 1
		for end < len(toks) && toks[end].Kind != srctok.Newline && !(toks[end].Text == ";" && toks[end].Depth == t.Depth) {
			end++
		}
		if end == i+1 {
			return
		}
		m.zeroReturn(i, i+1, end, "None", "False", "True")
	default:
		if !t.LineStart || pyKeywords[t.Text] {
			return
		}
		// An expression or assignment statement on a logical line of its
		// own: replaced by pass.
		end := i + 1
		for end < len(toks) && toks[end].Kind != srctok.Newline {
			if toks[end].Text == ";" && toks[end].Depth == 0 || toks[end].Text == ":" && toks[end].Depth == t.Depth {
				return // several statements, or an annotation / a block opener
			}
			end++
		}
		if end < len(toks) && toks[end].Kind == srctok.Newline {
			m.add(i, t.Off, toks[end-1].End, "pass", RemoveStatement, "remove "+short(m.text(i, end)))
		}
	}
}

// negate mutates the condition toks[a:b] of the statement opened by
// toks[kw]: drops a leading not/! or wraps the condition, unless the
// condition is a lone comparison (flip_comparison makes that mutant).
func (m *tokMut) negate(kw, a, b int, notWord, open, close string) {
	toks := m.toks
	depth := toks[a].Depth
	comparisons, logical := 0, false
	for k := a; k < b; k++ {
		if toks[k].Depth != depth {
			continue
		}
		if _, ok := jsNegated[toks[k].Text]; ok && toks[k].Kind == srctok.Op || toks[k].Text == "is" {
			comparisons++
		}
		switch toks[k].Text {
		case "and", "or", "&&", "||", "??", "?":
			logical = true
		}
	}
	cond := m.text(a, b)
	desc := "negate the condition " + short(cond)
	if !logical && comparisons == 1 && !strings.HasPrefix(cond, strings.TrimSpace(notWord)) {
		return
	}
	if !logical && strings.HasPrefix(cond, notWord) && comparisons == 0 {
		m.add(kw, toks[a].Off, toks[b-1].End, strings.TrimPrefix(cond, notWord), NegateCondition, desc)
		return
	}
	m.add(kw, toks[a].Off, toks[b-1].End, open+cond+close, NegateCondition, desc)
}

// zeroReturn replaces the returned value toks[a:b] with its zero value
// after the kind of its literal.
func (m *tokMut) zeroReturn(kw, a, b int, none, falseWord, trueWord string) {
	toks := m.toks
	val := m.text(a, b)
	zero := none
	if b == a+1 {
		switch t := toks[a]; {
		case t.Kind == srctok.Number:
			zero = "0"
		case t.Kind == srctok.String && !t.Regexp:
			zero = `""`
			if t.Value == "" {
				return
			}
		case t.Text == trueWord || t.Text == falseWord:
			zero = falseWord
		}
	} else if b == a+2 && (toks[a].Text == "[" || toks[a].Text == "{") {
		return // [] or {}
	} else if toks[a].Text == "[" && toks[b-1].Text == "]" && toks[b-1].Depth == toks[a].Depth {
		zero = "[]"
	} else if toks[a].Text == "{" && toks[b-1].Text == "}" && toks[b-1].Depth == toks[a].Depth && m.py {
		zero = "{}"
	}
	if val == zero || val == none || zero == "0" && (val == "0" || val == "0.0") || !m.py && (val == "null" || val == "undefined") {
		return
	}
	m.add(kw, toks[a].Off, toks[b-1].End, zero, ZeroReturn, "return "+zero+" instead of "+short(val))
}

// --- JavaScript / TypeScript

func (m *tokMut) jsIdent(i int) {
	t := m.toks[i]
	toks := m.toks
	if i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "?.") {
		return // a property named like a keyword
	}
	switch t.Text {
	case "if", "while":
		if i+1 >= len(toks) || toks[i+1].Text != "(" {
			return
		}
		open := i + 1
		end := open + 1
		for end < len(toks) && toks[end].Depth > toks[open].Depth {
			end++
		}
		if end >= len(toks) || toks[end].Text != ")" || end == open+1 {
			return
		}
		m.negate(i, open+1, end, "!", "!(", ")")
	case "return":
		end := i + 1
		for end < len(toks) {
			u := toks[end]
			if u.Depth < t.Depth || u.Text == ";" && u.Depth == t.Depth || u.Text == "," && u.Depth == t.Depth {
				break
			}
			if u.Depth == t.Depth && u.Line != toks[end-1].Line && !continues(toks[end-1], u) {
				break // automatic semicolon insertion
			}
			end++
		}
		if end == i+1 {
			return
		}
		m.zeroReturn(i, i+1, end, "undefined", "false", "true")
	default:
		if !t.LineStart || jsKeywords[t.Text] {
			return
		}
		if i > 0 {
			if p := toks[i-1]; !(p.Kind == srctok.Op && (p.Text == ";" || p.Text == "{" || p.Text == "}")) {
				return // not the start of a statement
			}
		}
		// A statement that ends with a semicolon at its own depth.
		end := i + 1
		for end < len(toks) && toks[end].Depth >= t.Depth && !(toks[end].Text == ";" && toks[end].Depth == t.Depth) {
			if toks[end].Depth == t.Depth && (toks[end].Text == "{" || toks[end].Text == "}" || toks[end].Text == ":" && end == i+1) {
				return // a block, an object or a label
			}
			if toks[end].Text == "=>" || toks[end].Text == "function" {
				return
			}
			end++
		}
		if end < len(toks) && toks[end].Text == ";" && toks[end].Depth == t.Depth {
			m.add(i, t.Off, toks[end].End, "", RemoveStatement, "remove "+short(m.text(i, end+1)))
		}
	}
}

// continues reports whether a line break between a and b does not end a
// statement: a ends in an operator, or b starts with one.
func continues(a, b srctok.Token) bool {
	if a.Kind == srctok.Op && a.Text != ")" && a.Text != "]" && a.Text != "}" && a.Text != "++" && a.Text != "--" {
		return true
	}
	if b.Kind == srctok.Op && b.Text != "(" && b.Text != "[" && b.Text != "{" && b.Text != "!" && b.Text != "++" && b.Text != "--" && b.Text != "+" && b.Text != "-" && b.Text != "~" {
		return true
	}
	return false
}
