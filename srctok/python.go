package srctok

import (
	"bytes"
	"strings"
)

// Python splits Python source into tokens. Comments and blank lines give
// none; each logical line ends with a Newline token (at bracket depth 0,
// not after a backslash). An unterminated string is an error with its
// line and column.
func Python(src []byte) ([]Token, error) {
	l := &lexer{src: src, line: 1}
	lineStart := true
	indent := 0
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case c == '\n':
			if l.depth == 0 && !lineStart {
				l.emit(Newline, l.pos, l.pos+1, "")
				lineStart = true
			} else {
				l.advance(l.pos + 1)
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.advance(l.pos + 1)
			continue
		case c == '#':
			end := bytes.IndexByte(src[l.pos:], '\n')
			if end < 0 {
				end = len(src) - l.pos
			}
			l.advance(l.pos + end)
			continue
		case c == '\\' && l.pos+1 < len(src) && (src[l.pos+1] == '\n' || src[l.pos+1] == '\r'):
			l.advance(l.pos + 2)
			continue
		}
		start := l.pos
		if lineStart {
			indent = l.col(start) - 1
		}
		var t *Token
		if q, prefixLen, ok := pyStringStart(src[start:]); ok {
			end, value, err := l.pyString(start, prefixLen, q)
			if err != nil {
				return nil, err
			}
			t = l.emit(String, start, end, value)
		} else if c >= '0' && c <= '9' || c == '.' && start+1 < len(src) && src[start+1] >= '0' && src[start+1] <= '9' {
			t = l.emit(Number, start, l.scanNumber(start), "")
		} else if end := l.scanIdent(start); end > start {
			t = l.emit(Ident, start, end, "")
		} else {
			end := l.scanOp(start, pyOps)
			switch src[start] {
			case '(', '[', '{':
				t = l.emit(Op, start, end, "")
				l.depth++
			case ')', ']', '}':
				if l.depth > 0 {
					l.depth--
				}
				t = l.emit(Op, start, end, "")
			default:
				t = l.emit(Op, start, end, "")
			}
		}
		t.Indent = indent
		t.LineStart = lineStart
		lineStart = false
	}
	if !lineStart {
		l.toks = append(l.toks, Token{Kind: Newline, Off: len(src), End: len(src), Line: l.line, Col: l.col(len(src))})
	}
	return l.toks, nil
}

// pyStringStart reports whether b starts a string literal: its quote
// (one quote, or three of them) and the length of its prefix (r, b, f, u,
// rb, br, fr, rf in any case).
func pyStringStart(b []byte) (quote string, prefixLen int, ok bool) {
	i := 0
	for i < len(b) && i < 2 && strings.IndexByte("rRbBfFuUtT", b[i]) >= 0 {
		i++
	}
	if i >= len(b) || b[i] != '\'' && b[i] != '"' {
		return "", 0, false
	}
	q := string(b[i])
	if i+2 < len(b) && b[i+1] == b[i] && b[i+2] == b[i] {
		q = strings.Repeat(q, 3)
	}
	return q, i, true
}

func (l *lexer) pyString(start, prefixLen int, q string) (int, string, error) {
	prefix := strings.ToLower(string(l.src[start : start+prefixLen]))
	raw := strings.Contains(prefix, "r")
	format := strings.Contains(prefix, "f") || strings.Contains(prefix, "t")
	bodyStart := start + prefixLen + len(q)
	i := bodyStart
	for i < len(l.src) {
		c := l.src[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '\n' && len(q) == 1 {
			return 0, "", l.errAt(start, "unterminated string")
		}
		if strings.HasPrefix(string(l.src[i:min(len(l.src), i+len(q))]), q) {
			body := string(l.src[bodyStart:i])
			if format {
				body = blankBraces(body)
			}
			if !raw {
				body = decode(body)
			}
			return i + len(q), body, nil
		}
		i++
	}
	return 0, "", l.errAt(start, "unterminated string")
}

// blankBraces replaces each {…} of a format string by "1" ({{ and }} stand
// for one brace).
func blankBraces(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth == 0 && c == '{' && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte('{')
			i++
		case depth == 0 && c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			if depth == 0 {
				b.WriteByte('1')
			}
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}
