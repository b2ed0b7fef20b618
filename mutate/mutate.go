// Package mutate makes mutants of the lines a loop changed, and only of
// those, to measure how strong a loop's checks are: a check that still
// passes with a changed line mutated did not pin that line.
//
// Mutants(path, src, lines) returns, for one file, the mutants whose
// mutation starts on one of the given lines, each with the whole mutated
// file. The operators (Op):
//
//   - flip_comparison: a comparison negated (< to >=, == to !=, === to
//     !==; Python's is to is not).
//   - negate_condition: the condition of an if, else if / elif, for or
//     while negated (!(c), not (c)); a condition that starts with ! or
//     not loses it. Left out where the condition is a lone comparison
//     (flip_comparison makes the same mutant).
//   - swap_logical: && and || swapped (Python's and / or).
//   - zero_return: a returned value replaced by its zero value (Go: by the
//     result type: 0, "", false, nil, or *new(T) for a named, struct or
//     array type; Python: 0, "", False, [], {} after the literal's kind,
//     else None; JavaScript: 0, "", false, [], {} likewise, else
//     undefined). Left out where the value already is that zero.
//   - remove_statement: a call, assignment (not a declaration),
//     increment, send, defer or go statement removed (Python: replaced by
//     pass). A call of panic is kept (removing it can leave a function
//     without its terminating statement).
//   - change_constant: an integer literal increased by one (the largest
//     int64 decreased by one).
//
// Where an operator is obviously equivalent it is skipped (swapping && and
// || between two identical operands; a zero return of a zero). Mutants come
// in a fixed order (by line, column, then operator); at most max per file
// (DefaultMax), taken a line at a time in turn so that every changed line
// gets its first mutant before any line gets a second.
//
// Which library: none. The Go mutation tools (gremlins, go-mutesting) are
// programs whose operators are not a library API (gremlins keeps its
// mutators under internal/; go-mutesting is not served by the module
// proxy), and no Go library mutates Python or JavaScript. The operators are
// written here: for Go from go/parser's syntax tree, as byte edits at the
// tree's positions, so a mutant keeps the file's formatting and comments
// and differs from it in one place; for Python and JavaScript/TypeScript
// over the tokens of package srctok, so no string, comment or regular
// expression is ever changed.
//
// Cost: O(change). For Go only the top-level declarations that hold a
// changed line are parsed (found by the column-0 keyword that opens them;
// when such a slice does not parse, the whole file is); the one pass over
// the whole file is a vectorized search for line ends. Python and
// JavaScript are tokenized whole (a tokenizer is linear and cheap). Each
// mutant's Source is a copy of the file with one edit, so the bytes
// returned grow with the file size times the number of mutants (at most
// DefaultMax); Offset, End and Replacement give the same edit without the
// copy. Measured (20 changed lines, a 2-core machine under a load of
// about 20, so the figures are ranges): finding the mutants
// (BenchmarkGoEdits) takes 0.4–0.7 ms in a 10,000-line Go file and 2–6 ms
// in a 100,000-line one, where parsing the whole file
// (BenchmarkWholeFileParse) takes 8–27 ms and 270–380 ms; building the
// Sources of the 10,000-line file's first 40 mutants (DefaultMax of the
// 100 found) takes about 6 ms
// (BenchmarkMutants, capped at DefaultMax).
//
// Limits: a mutant is guaranteed to parse for Go (the edits replace
// whole expressions or operators with expressions), not to compile: a
// removed statement can leave an import or a variable unused, a changed
// constant can duplicate a switch case or overflow a typed constant, a
// *new(T) zero names a type the way the function's signature does. The
// engine should count a mutant whose build fails as not compiled, not as
// caught. For Python and JavaScript the operators work on tokens, not a
// syntax tree: a comparison inside a TypeScript type or JSX is left alone
// only when < or > has no space on both sides (a < b is mutated, Array<T>
// is not); Python's in and not in are not flipped (for … in shares the
// keyword); a statement is removed only when it is on lines of its own
// and, in JavaScript, ends with a semicolon; a JavaScript return whose
// value runs on past a line end without an operator ends there (automatic
// semicolon insertion). A changed line inside a Go raw string whose text
// is itself balanced Go code may be read as code (the mutant then changes
// the string and still parses). Other languages give no mutants.
//
// Checked beyond the tests: every mutant of every line of 60 modules of
// Python 3.11's standard library (2,004 mutants) parses with python3's
// ast.parse, and of 60 of npm's CommonJS files (1,365) with node's
// vm.Script.
package mutate

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/looprinter/looprinter/srctok"
)

// Op is a mutation operator.
type Op string

const (
	FlipComparison  Op = "flip_comparison"
	NegateCondition Op = "negate_condition"
	SwapLogical     Op = "swap_logical"
	ZeroReturn      Op = "zero_return"
	RemoveStatement Op = "remove_statement"
	ChangeConstant  Op = "change_constant"
)

var opRank = map[Op]int{FlipComparison: 0, NegateCondition: 1, SwapLogical: 2, ZeroReturn: 3, RemoveStatement: 4, ChangeConstant: 5}

// DefaultMax is the most mutants Mutants returns for one file.
const DefaultMax = 40

// Mutant is one mutant of a file. Line and Column (1-based, Column in
// bytes) are where the mutation starts; Description says what changed
// ("flip < to >="), with control characters escaped; Source is the whole
// mutated file.
type Mutant struct {
	Path        string
	Line        int
	Column      int
	Op          Op
	Description string
	Source      []byte
	// The edit that made Source: src[Offset:End] replaced by Replacement.
	Offset, End int
	Replacement string
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", m.Path, m.Line, m.Column, m.Description)
}

// edit replaces src[off:end] with repl.
type edit struct {
	off, end  int
	repl      string
	line, col int
	op        Op
	desc      string
}

// Mutants returns at most DefaultMax mutants of the given lines (1-based)
// of one file; see MutantsMax.
func Mutants(path string, src []byte, lines []int) ([]Mutant, error) {
	return MutantsMax(path, src, lines, DefaultMax)
}

// MutantsMax returns at most max mutants (max <= 0: no cap) of the given
// lines of the file at path, whose language comes from its extension (.go;
// .py; .js, .mjs, .cjs, .jsx, .ts, .mts, .cts, .tsx). A file of another
// language, or no lines, gives none. A file that cannot be parsed or
// tokenized is an error with its path:line:column.
func MutantsMax(path string, src []byte, lines []int, max int) ([]Mutant, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	want := make(map[int]bool, len(lines))
	for _, l := range lines {
		want[l] = true
	}
	var edits []edit
	var err error
	switch language(path) {
	case "go":
		edits, err = goEdits(src, want)
	case "python":
		edits, err = tokEdits(src, want, true)
	case "js":
		edits, err = tokEdits(src, want, false)
	default:
		return nil, nil
	}
	if err != nil {
		var te *srctok.Error
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s:%d:%d: %s", path, te.Line, te.Col, te.Msg)
		}
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	edits = choose(edits, max)
	out := make([]Mutant, 0, len(edits))
	for _, e := range edits {
		// A word put against a word would join them (return!x → returnnil).
		if e.repl != "" && e.off > 0 && isWordByte(src[e.off-1]) && isWordByte(e.repl[0]) {
			e.repl = " " + e.repl
		}
		if e.repl != "" && e.end < len(src) && isWordByte(src[e.end]) && isWordByte(e.repl[len(e.repl)-1]) {
			e.repl += " "
		}
		s := make([]byte, 0, len(src)-(e.end-e.off)+len(e.repl))
		s = append(append(append(s, src[:e.off]...), e.repl...), src[e.end:]...)
		out = append(out, Mutant{Path: path, Line: e.line, Column: e.col, Op: e.op, Description: e.desc, Source: s,
			Offset: e.off, End: e.end, Replacement: e.repl})
	}
	return out, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func language(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go":
		return "go"
	case ".py", ".pyw":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return "js"
	}
	return ""
}

// choose orders the edits, drops repeats, and takes at most max of them a
// line at a time in turn.
func choose(edits []edit, max int) []edit {
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		if opRank[a.op] != opRank[b.op] {
			return opRank[a.op] < opRank[b.op]
		}
		return a.desc < b.desc
	})
	type key struct {
		off, end int
		repl     string
	}
	seen := map[key]bool{}
	var uniq []edit
	for _, e := range edits {
		k := key{e.off, e.end, e.repl}
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, e)
	}
	if max <= 0 || len(uniq) <= max {
		return uniq
	}
	// Round robin over the lines.
	var byLine [][]edit
	for _, e := range uniq {
		if n := len(byLine); n > 0 && byLine[n-1][0].line == e.line {
			byLine[n-1] = append(byLine[n-1], e)
		} else {
			byLine = append(byLine, []edit{e})
		}
	}
	var out []edit
	for round := 0; len(out) < max; round++ {
		took := false
		for _, l := range byLine {
			if round < len(l) && len(out) < max {
				out = append(out, l[round])
				took = true
			}
		}
		if !took {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		return opRank[a.op] < opRank[b.op]
	})
	return out
}

// short cuts a piece of source for a description: one line, at most 40
// bytes, control and other unprintable characters escaped as Go escapes
// (\x16, \u2028), everything else as it is.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 40 {
		cut := 37
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			if r == utf8.RuneError {
				fmt.Fprintf(&b, "\\x%02x", s[i])
				continue
			}
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lineIndex maps offsets to lines and columns.
type lineIndex []int // offsets of line starts

// newLineIndex is the one pass over the whole file (a vectorized search
// for line ends); everything else reads the changed declarations only.
func newLineIndex(src []byte) lineIndex {
	idx := make(lineIndex, 1, bytes.Count(src, []byte("\n"))+1)
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return idx
		}
		off += i + 1
		idx = append(idx, off)
	}
}

func (x lineIndex) pos(off int) (line, col int) {
	i := sort.SearchInts(x, off+1) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - x[i] + 1
}
