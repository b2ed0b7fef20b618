package srctok

import (
	"bytes"
	"strings"
)

// JS splits JavaScript or TypeScript source into tokens. Comments give
// none; there are no Newline tokens (JavaScript's line ends matter only
// through automatic semicolon insertion, which callers judge from Line).
// Template literals are one String token whose Value has each ${…}
// replaced by "1". An unterminated string, template, comment or regular
// expression is an error with its line and column.
func JS(src []byte) ([]Token, error) {
	l := &lexer{src: src, line: 1}
	if err := l.js(false); err != nil {
		return nil, err
	}
	return l.toks, nil
}

// maxNest is how deep template literals may nest in one another.
const maxNest = 200

// js tokenizes from l.pos to the end of the source or, inTemplate, to
// just after the "}" that closes a template literal's ${.
func (l *lexer) js(inTemplate bool) error {
	src := l.src
	prevLine := 0
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.advance(l.pos + 1)
			continue
		case c == '/' && l.pos+1 < len(src) && src[l.pos+1] == '/':
			end := bytes.IndexByte(src[l.pos:], '\n')
			if end < 0 {
				end = len(src) - l.pos
			}
			l.advance(l.pos + end)
			continue
		case c == '/' && l.pos+1 < len(src) && src[l.pos+1] == '*':
			end := bytes.Index(src[l.pos+2:], []byte("*/"))
			if end < 0 {
				return l.errAt(l.pos, "unterminated comment")
			}
			l.advance(l.pos + 2 + end + 2)
			continue
		case c == '#' && l.pos == 0 && len(src) > 1 && src[1] == '!':
			end := bytes.IndexByte(src, '\n')
			if end < 0 {
				end = len(src)
			}
			l.advance(end)
			continue
		}
		start := l.pos
		var t *Token
		switch {
		case c == '\'' || c == '"':
			end, err := l.jsQuoted(start, c)
			if err != nil {
				return err
			}
			t = l.emit(String, start, end, decode(string(src[start+1:end-1])))
		case c == '`':
			end, value, err := l.jsTemplate(start)
			if err != nil {
				return err
			}
			t = l.emit(String, start, end, value)
		case c == '/' && l.regexAllowed():
			end, err := l.jsRegexp(start)
			if err != nil {
				return err
			}
			t = l.emit(String, start, end, "")
			t.Regexp = true
		case c >= '0' && c <= '9' || c == '.' && start+1 < len(src) && src[start+1] >= '0' && src[start+1] <= '9':
			t = l.emit(Number, start, l.scanNumber(start), "")
		default:
			if end := l.scanIdent(start); end > start {
				t = l.emit(Ident, start, end, "")
				break
			}
			if c == '\\' { // an escaped identifier start (\u0041bc)
				t = l.emit(Op, start, start+1, "")
				break
			}
			end := l.scanOp(start, jsOps)
			switch c {
			case '(', '[', '{':
				t = l.emit(Op, start, end, "")
				l.depth++
			case ')', ']', '}':
				if inTemplate && c == '}' && l.depth == 0 {
					l.advance(end)
					return nil
				}
				if l.depth > 0 {
					l.depth--
				}
				t = l.emit(Op, start, end, "")
			default:
				t = l.emit(Op, start, end, "")
			}
		}
		t.LineStart = t.Line != prevLine
		prevLine = t.Line
	}
	if inTemplate {
		return errUnterminatedTemplate
	}
	return nil
}

var errUnterminatedTemplate = &Error{Msg: "unterminated template literal"}

// regexAllowed says whether a '/' here starts a regular expression
// literal rather than a division, from the token before it.
func (l *lexer) regexAllowed() bool {
	if len(l.toks) == 0 {
		return true
	}
	p := l.toks[len(l.toks)-1]
	switch p.Kind {
	case Number, String:
		return false
	case Ident:
		switch p.Text {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await":
			return true
		}
		return false
	}
	switch p.Text {
	case ")", "]", "}", "++", "--":
		return false
	}
	return true
}

func (l *lexer) jsQuoted(start int, q byte) (int, error) {
	for i := start + 1; i < len(l.src); i++ {
		switch l.src[i] {
		case '\\':
			i++
		case '\n':
			return 0, l.errAt(start, "unterminated string")
		case q:
			return i + 1, nil
		}
	}
	return 0, l.errAt(start, "unterminated string")
}

// jsTemplate scans a template literal from its opening backquote,
// skipping the code of each ${…} (strings, comments and nested templates
// in it included).
func (l *lexer) jsTemplate(start int) (int, string, error) {
	var value strings.Builder
	litStart := start + 1
	i := start + 1
	for i < len(l.src) {
		switch c := l.src[i]; {
		case c == '\\':
			i += 2
		case c == '`':
			value.WriteString(decode(string(l.src[litStart:i])))
			return i + 1, value.String(), nil
		case c == '$' && i+1 < len(l.src) && l.src[i+1] == '{':
			value.WriteString(decode(string(l.src[litStart:i])))
			value.WriteByte('1')
			if l.nest >= maxNest {
				return 0, "", l.errAt(start, "template literals nested too deep")
			}
			// The code inside ${…} is tokenized by a lexer of its own
			// (its tokens are not the caller's: the template is one
			// string), so strings, regexps and templates in it end where
			// they do.
			sub := &lexer{src: l.src, pos: i + 2, line: 1, nest: l.nest + 1}
			if err := sub.js(true); err != nil {
				if err == errUnterminatedTemplate {
					return 0, "", l.errAt(start, "unterminated template literal")
				}
				return 0, "", err
			}
			i = sub.pos
			litStart = i
		default:
			i++
		}
	}
	return 0, "", l.errAt(start, "unterminated template literal")
}

func (l *lexer) jsRegexp(start int) (int, error) {
	inClass := false
	for i := start + 1; i < len(l.src); i++ {
		switch l.src[i] {
		case '\\':
			i++
		case '\n':
			return 0, l.errAt(start, "unterminated regular expression")
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				j := i + 1
				for j < len(l.src) && (l.src[j] >= 'a' && l.src[j] <= 'z' || l.src[j] >= 'A' && l.src[j] <= 'Z') {
					j++
				}
				return j, nil
			}
		}
	}
	return 0, l.errAt(start, "unterminated regular expression")
}
