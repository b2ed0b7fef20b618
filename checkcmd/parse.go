package checkcmd

import (
	"path"
	"strings"
)

// Word is one word of a command after quote removal.
type Word struct {
	Text    string
	Dynamic bool   // holds an expansion or a glob: not known before it runs
	Raw     string // as written in the line
}

// Unknown is the Dir of a command that runs after a cd to a place only
// known when the line runs (cd "$X", cd -).
const Unknown = "?"

// Command is one simple command of a line: its words without the variable
// assignments in front and without redirections.
type Command struct {
	Words []Word
	// Dir is the directory the command runs in, relative to the one the
	// line starts in: "" there, a relative or absolute path after cd, or
	// Unknown.
	Dir string
	// Op is the operator before it: "" for the first, ";", "&", "&&", "||"
	// or "|".
	Op   string
	Bang bool // after !
	Bg   bool // followed by &: it runs in the background
	// Nested is set for commands inside a command substitution, a subshell,
	// a compound command (if, while, for, case, { }) or an sh -c string.
	Nested bool
}

// Name is the command's first word, "" when there is none.
func (c Command) Name() string {
	if len(c.Words) == 0 {
		return ""
	}
	return c.Words[0].Text
}

type parsed struct {
	cmds []Command
	flat bool // only simple commands joined by ; & && || | and !
}

var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true,
	"done": true, "while": true, "until": true, "{": true, "}": true, "!": true, "for": true, "select": true,
	"case": true, "esac": true, "in": true, "function": true}

// Commands returns every simple command a line runs, in order, including
// those in command substitutions. The error says where the line cannot be
// read (an unclosed quote).
func Commands(line string) ([]Command, error) {
	p, err := parse(line, "", 0)
	if err != nil {
		return nil, err
	}
	return p.cmds, nil
}

func parse(line, dir string, depth int) (parsed, error) {
	toks, err := lex(line)
	if err != nil {
		return parsed{}, err
	}
	out := parsed{flat: true}
	const (
		normal = iota
		skipHead
		caseHead
		casePattern
	)
	var (
		words    []Word
		op       string
		bang     bool
		nested   int // depth of subshells and compound commands
		mode     = normal
		inCase   int
		redir    bool
		dirStack []string
	)
	emit := func() {
		if len(words) == 0 {
			return
		}
		c := Command{Words: words, Dir: dir, Op: op, Bang: bang, Nested: nested > 0 || depth > 0}
		out.cmds = append(out.cmds, c)
		if n := c.Name(); n == "cd" || n == "pushd" {
			dir = cdTarget(dir, c.Words[1:])
		}
		words, op, bang = nil, "", false
	}
	for _, t := range toks {
		if redir {
			redir = false
			if t.kind == tWord {
				for _, s := range t.subs {
					if err := out.sub(s, dir, depth); err != nil {
						return parsed{}, err
					}
				}
				continue
			}
		}
		switch t.kind {
		case tRedir:
			redir = true
		case tOp:
			n := len(out.cmds)
			emit()
			switch t.val {
			case "&":
				if len(out.cmds) > n {
					out.cmds[len(out.cmds)-1].Bg = true
				}
			}
			switch t.val {
			case "(":
				out.flat = false
				if mode == casePattern {
					continue
				}
				nested++
				dirStack = append(dirStack, dir)
			case ")":
				out.flat = false
				if mode == casePattern {
					mode = normal
					continue
				}
				if nested > 0 {
					nested--
				}
				if n := len(dirStack); n > 0 {
					dir, dirStack = dirStack[n-1], dirStack[:n-1]
				}
			case ";;":
				if inCase > 0 {
					mode = casePattern
				}
				op = ";"
			case "\n", ";":
				if mode == skipHead {
					mode = normal
				}
				op = ";"
			case "|&":
				op = "|"
			default:
				op = t.val
			}
		case tWord:
			for _, s := range t.subs {
				if err := out.sub(s, dir, depth); err != nil {
					return parsed{}, err
				}
			}
			switch mode {
			case skipHead:
				if t.val == "do" && !t.quoted {
					mode = normal
				}
				continue
			case caseHead:
				if t.val == "in" && !t.quoted {
					mode = casePattern
				}
				continue
			case casePattern:
				if t.val == "esac" && !t.quoted {
					mode, inCase = normal, inCase-1
					nested--
				}
				continue
			}
			if len(words) == 0 {
				if t.assign {
					continue
				}
				if reserved[t.val] && !t.quoted && !t.dynamic {
					switch t.val {
					case "!":
						bang = !bang
						continue
					case "for", "select", "function":
						mode = skipHead
						nested++
					case "case":
						mode = caseHead
						inCase++
						nested++
					case "if", "while", "until", "{":
						nested++
					case "fi", "done", "}":
						if nested > 0 {
							nested--
						}
					case "esac":
						if inCase > 0 {
							inCase--
							nested--
						}
					}
					out.flat = false
					continue
				}
			}
			words = append(words, Word{Text: t.val, Dynamic: t.dynamic, Raw: t.raw})
		}
	}
	emit()
	return out, nil
}

// sub parses a command substitution's text and adds its commands.
func (p *parsed) sub(s, dir string, depth int) error {
	if depth >= maxDepth {
		return nil
	}
	q, err := parse(s, dir, depth+1)
	if err != nil {
		return err
	}
	p.cmds = append(p.cmds, q.cmds...)
	return nil
}

// cdTarget is the directory after cd with these arguments.
func cdTarget(dir string, args []Word) string {
	for len(args) > 0 && (args[0].Text == "-L" || args[0].Text == "-P" || args[0].Text == "--") {
		args = args[1:]
	}
	if len(args) == 0 || args[0].Dynamic || args[0].Text == "-" || dir == Unknown {
		return Unknown
	}
	t := args[0].Text
	if strings.HasPrefix(t, "/") {
		return path.Clean(t)
	}
	j := path.Join(dir, t)
	if j == "." {
		return ""
	}
	return j
}
