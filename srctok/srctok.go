// Package srctok splits Python and JavaScript/TypeScript source into tokens,
// enough to tell code from strings and comments: the tells scanner and the
// mutation operators read these tokens instead of the raw bytes, so that
// nothing inside a string or a comment is ever taken for code or changed.
//
// It is a tokenizer, not a parser. It knows the lexical rules that decide
// where a string, a comment or a regular expression literal ends (Python's
// string prefixes, triple quotes and line joining; JavaScript's template
// literals with nested ${…}, regular expression literals told from division
// by the token before them), brackets' depth and, for Python, where a
// logical line ends. Its limits: an f-string or a template literal is one
// string token (the code inside its braces is not split further); JSX text
// between tags is read as code, so an apostrophe in it can open a string
// (the tokenizer then reports an unterminated string rather than guess);
// a regular expression literal after `)` (as in `if (x) /re/.test(y)`) is
// read as division.
package srctok

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is what a token is.
type Kind int

const (
	Ident   Kind = iota // a name or a keyword
	Number              // a numeric literal
	String              // a string, f-string, template literal or (JS) regular expression literal
	Op                  // an operator or punctuation
	Newline             // Python: the end of a logical line
)

// Token is one token of the source. Off and End are byte offsets (End
// exclusive); Line and Col are 1-based, Col in bytes.
type Token struct {
	Kind      Kind
	Off, End  int
	Line, Col int
	Text      string // the token's bytes
	// Value is a string token's contents with its escapes decoded (the
	// parts of an f-string or template literal inside braces are replaced
	// by "1"); empty for other kinds. A JS regular expression literal has
	// Regexp set and Value empty.
	Value  string
	Regexp bool
	// Depth is the bracket depth ((), [], {}) before the token.
	Depth int
	// Indent (Python) is the column of the first token of the token's
	// logical line, 0-based; LineStart is true for that first token.
	Indent    int
	LineStart bool
}

// Error is a tokenizing error at a position.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

type lexer struct {
	src     []byte
	pos     int
	line    int
	lineOff int
	toks    []Token
	depth   int
	nest    int // JS: how many template literals this lexer is inside
}

func (l *lexer) col(off int) int { return off - l.lineOff + 1 }

// errAt returns an Error at byte offset off.
func (l *lexer) errAt(off int, format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < off && i < len(l.src); i++ {
		if l.src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// advance moves pos to end, counting newlines.
func (l *lexer) advance(end int) {
	for i := l.pos; i < end; i++ {
		if l.src[i] == '\n' {
			l.line++
			l.lineOff = i + 1
		}
	}
	l.pos = end
}

func (l *lexer) emit(k Kind, start, end int, value string) *Token {
	// Line and column of start: start may be on an earlier line than pos
	// when the token spans lines, so they are computed before advancing.
	t := Token{Kind: k, Off: start, End: end, Line: l.line, Col: l.col(start), Text: string(l.src[start:end]), Value: value, Depth: l.depth}
	l.advance(end)
	l.toks = append(l.toks, t)
	return &l.toks[len(l.toks)-1]
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || unicode.IsDigit(r) || r == '\u200c' || r == '\u200d' || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

func (l *lexer) scanIdent(start int) int {
	i := start
	for i < len(l.src) {
		r, n := utf8.DecodeRune(l.src[i:])
		if i == start && !isIdentStart(r) || i > start && !isIdentPart(r) {
			break
		}
		i += n
	}
	return i
}

func (l *lexer) scanNumber(start int) int {
	i := start
	for i < len(l.src) {
		c := l.src[i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' {
			if (c == 'e' || c == 'E') && i+1 < len(l.src) && (l.src[i+1] == '+' || l.src[i+1] == '-') && !isHexPrefix(l.src[start:]) {
				i += 2
				continue
			}
			i++
			continue
		}
		break
	}
	return i
}

func isHexPrefix(b []byte) bool {
	return len(b) > 1 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
}

// longest-first operator lists.
var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}
var jsOps = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
	"<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>"}

func (l *lexer) scanOp(start int, ops []string) int {
	for _, op := range ops {
		if strings.HasPrefix(string(l.src[start:min(len(l.src), start+len(op))]), op) {
			return start + len(op)
		}
	}
	_, n := utf8.DecodeRune(l.src[start:])
	return start + n
}

// decode decodes the escapes of a string body (not raw).
func decode(body string) string {
	if !strings.Contains(body, "\\") {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := body[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'b':
			b.WriteByte('\b')
		case 'a':
			b.WriteByte('\a')
		case '\n':
		case 'x', 'u', 'U':
			size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if e == 'u' && i+1 < len(body) && body[i+1] == '{' {
				if j := strings.IndexByte(body[i:min(len(body), i+12)], '}'); j > 2 {
					if v, err := strconv.ParseUint(body[i+2:i+j], 16, 32); err == nil {
						b.WriteRune(rune(v))
						i += j
						continue
					}
				}
			}
			if i+1+size <= len(body) {
				if v, err := strconv.ParseUint(body[i+1:i+1+size], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += size
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			v := 0
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				v = v*8 + int(body[j]-'0')
				j++
			}
			b.WriteRune(rune(v))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
