// Package gatecmd reads a check's shell command line (a verify or
// objective_verify entry, run with /bin/sh -c) without running it: which
// files it runs as programs, and whether it can fail at all. It is a small
// POSIX shell reader, enough for check lines: quoting, escapes, expansions,
// command substitution, redirections, here-documents, the operators ; & &&
// || | ( ) and the reserved words. It never panics and never runs anything.
package checkcmd

import (
	"fmt"
	"strings"
)

type tokKind int

const (
	tWord  tokKind = iota
	tOp            // ; & && || | |& ( ) ;; and newline
	tRedir         // < > >> << <<- <<< <& >& <> >| &> &>>
)

type token struct {
	kind    tokKind
	val     string   // a word after quote removal; an operator's text
	dynamic bool     // the word holds an expansion or a glob: its value is known only when it runs
	quoted  bool     // some part of the word was quoted or escaped
	assign  bool     // NAME=value
	subs    []string // command substitutions inside the word: commands that run too
	raw     string   // the word as written
}

type heredoc struct {
	delim string
	strip bool // <<-: leading tabs are removed
}

// maxDepth bounds nested command substitutions and sh -c strings.
const maxDepth = 8

// lex splits a command line into tokens. The error names the column.
func lex(s string) ([]token, error) {
	var (
		toks     []token
		cur      strings.Builder
		w        token
		inWord   bool
		pending  []heredoc
		delim    bool // the next word is a here-document delimiter
		strip    bool
		sawEqual bool
		i        int
		wstart   int
	)
	flush := func() {
		if !inWord {
			return
		}
		w.val = cur.String()
		w.raw = s[wstart:min(i, len(s))]
		if delim {
			pending = append(pending, heredoc{w.val, strip})
			delim = false
		}
		toks = append(toks, w)
		w, inWord, sawEqual = token{}, false, false
		cur.Reset()
	}
	for i < len(s) {
		c := s[i]
		if !inWord {
			wstart = i
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			flush()
			i++
		case c == '\n':
			flush()
			toks = append(toks, token{kind: tOp, val: "\n"})
			i++
			for _, h := range pending {
				i = skipHeredoc(s, i, h)
			}
			pending = nil
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 >= len(s) {
				i++
				continue
			}
			if s[i+1] == '\n' { // line continuation
				i += 2
				continue
			}
			inWord, w.quoted = true, true
			cur.WriteByte(s[i+1])
			i += 2
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("column %d: a single quote is not closed", i+1)
			}
			inWord, w.quoted = true, true
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			inWord, w.quoted = true, true
			start := i
			i++
			for i < len(s) && s[i] != '"' {
				switch s[i] {
				case '\\':
					if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
						if s[i+1] != '\n' {
							cur.WriteByte(s[i+1])
						}
						i += 2
					} else {
						cur.WriteByte('\\')
						i++
					}
				case '$':
					n, err := lexDollar(s, i, &w, &cur)
					if err != nil {
						return nil, err
					}
					i = n
				case '`':
					n, err := lexBacktick(s, i, &w, &cur)
					if err != nil {
						return nil, err
					}
					i = n
				default:
					cur.WriteByte(s[i])
					i++
				}
			}
			if i >= len(s) {
				return nil, fmt.Errorf("column %d: a double quote is not closed", start+1)
			}
			i++
		case c == '$':
			inWord = true
			n, err := lexDollar(s, i, &w, &cur)
			if err != nil {
				return nil, err
			}
			i = n
		case c == '`':
			inWord = true
			n, err := lexBacktick(s, i, &w, &cur)
			if err != nil {
				return nil, err
			}
			i = n
		case c == '<' || c == '>':
			if (c == '<' || c == '>') && i+1 < len(s) && s[i+1] == '(' { // <(cmd) >(cmd)
				end := matchParen(s, i+1)
				if end < 0 {
					return nil, fmt.Errorf("column %d: a parenthesis is not closed", i+2)
				}
				inWord, w.dynamic = true, true
				w.subs = append(w.subs, s[i+2:end])
				cur.WriteByte('$')
				i = end + 1
				continue
			}
			if inWord && !w.quoted && !w.dynamic && isDigits(cur.String()) {
				w, inWord, sawEqual = token{}, false, false // a file descriptor: 2>&1
				cur.Reset()
			} else {
				flush()
			}
			op := longest(s[i:], "<<<", "<<-", "<<", "<&", "<>", ">>", ">&", ">|", "<", ">")
			toks = append(toks, token{kind: tRedir, val: op})
			if op == "<<" || op == "<<-" {
				delim, strip = true, op == "<<-"
			}
			i += len(op)
		case c == '&' && i+1 < len(s) && s[i+1] == '>':
			flush()
			op := longest(s[i:], "&>>", "&>")
			toks = append(toks, token{kind: tRedir, val: op})
			i += len(op)
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			flush()
			op := longest(s[i:], ";;", "&&", "||", "|&", ";", "&", "|", "(", ")")
			toks = append(toks, token{kind: tOp, val: op})
			i += len(op)
		case c == '*' || c == '?' || c == '[':
			inWord, w.dynamic = true, true
			cur.WriteByte(c)
			i++
		case c == '~' && !inWord:
			inWord, w.dynamic = true, true
			cur.WriteByte(c)
			i++
		default:
			if c == '=' && inWord && !sawEqual && !w.quoted && !w.dynamic && isName(cur.String()) {
				w.assign = true
			}
			if c == '=' {
				sawEqual = true
			}
			inWord = true
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	return toks, nil
}

// lexDollar reads an expansion at s[i] == '$' and returns the index after it.
func lexDollar(s string, i int, w *token, cur *strings.Builder) (int, error) {
	if i+1 >= len(s) {
		cur.WriteByte('$')
		return i + 1, nil
	}
	switch n := s[i+1]; {
	case n == '(':
		end := matchParen(s, i+1)
		if end < 0 {
			return 0, fmt.Errorf("column %d: $( is not closed", i+1)
		}
		w.dynamic = true
		cur.WriteByte('$')
		if i+2 < len(s) && s[i+2] == '(' { // $(( arithmetic ))
			return end + 1, nil
		}
		w.subs = append(w.subs, s[i+2:end])
		return end + 1, nil
	case n == '{':
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return 0, fmt.Errorf("column %d: ${ is not closed", i+1)
		}
		w.dynamic = true
		cur.WriteByte('$')
		return i + j + 1, nil
	case n == '_' || n >= 'A' && n <= 'Z' || n >= 'a' && n <= 'z':
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		w.dynamic = true
		cur.WriteByte('$')
		return j, nil
	case strings.IndexByte("0123456789?@*#$!-", n) >= 0:
		w.dynamic = true
		cur.WriteString(s[i : i+2])
		return i + 2, nil
	}
	cur.WriteByte('$')
	return i + 1, nil
}

func lexBacktick(s string, i int, w *token, cur *strings.Builder) (int, error) {
	var b strings.Builder
	j := i + 1
	for j < len(s) && s[j] != '`' {
		if s[j] == '\\' && j+1 < len(s) {
			b.WriteByte(s[j+1])
			j += 2
			continue
		}
		b.WriteByte(s[j])
		j++
	}
	if j >= len(s) {
		return 0, fmt.Errorf("column %d: a backquote is not closed", i+1)
	}
	w.dynamic = true
	w.subs = append(w.subs, b.String())
	cur.WriteByte('$')
	return j + 1, nil
}

// matchParen returns the index of the ')' that closes s[open] == '(', or -1.
func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func skipHeredoc(s string, i int, h heredoc) int {
	for i < len(s) {
		end := strings.IndexByte(s[i:], '\n')
		line, next := s[i:], len(s)
		if end >= 0 {
			line, next = s[i:i+end], i+end+1
		}
		if h.strip {
			line = strings.TrimLeft(line, "\t")
		}
		i = next
		if line == h.delim {
			break
		}
	}
	return i
}

func longest(s string, ops ...string) string {
	for _, op := range ops {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return s[:1]
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
