package spec

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

var (
	typeOfLoop     = reflect.TypeOf(Loop{})
	typeDuration   = reflect.TypeOf(Duration(0))
	typeStringList = reflect.TypeOf(StringList(nil))
	typeRedact     = reflect.TypeOf(Redact{})
	typeNetwork    = reflect.TypeOf(Network{})
	typeChecksNet  = reflect.TypeOf(ChecksNetwork{})
	typeChecks     = reflect.TypeOf(Checks{})
	typeChecksMode = reflect.TypeOf(ChecksNetworkMode(""))
	typeSandbox    = reflect.TypeOf(SandboxOpts{})
	typeStrength   = reflect.TypeOf(VerifyStrength{})
	typeLimits     = reflect.TypeOf(Limits{})
	typeApprove    = reflect.TypeOf(PlanApprove{})
)

// checker walks the YAML node tree against the Go types, so that every
// unknown field and every wrong type is reported with its position, all at
// once, before anything is decoded.
type checker struct {
	problems []Problem
	nodes    map[string]*yaml.Node // dotted path → value node, for later messages
}

func (c *checker) add(n *yaml.Node, format string, args ...any) {
	c.problems = append(c.problems, Problem{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) walk(n *yaml.Node, t reflect.Type, path string) {
	if c.nodes == nil {
		c.nodes = map[string]*yaml.Node{}
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	c.nodes[path] = n
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // empty value: the default applies
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	label := path
	if label == "" {
		label = "the loop file"
	}
	switch {
	case t == typeDuration:
		if n.Kind != yaml.ScalarNode {
			c.add(n, "%s: want a duration like 20m or 4h", label)
			return
		}
		if _, err := parseDuration(n.Value); err != nil {
			c.add(n, "%s: %v", label, err)
		}
		return
	case t == typeRedact && n.Kind == yaml.ScalarNode:
		switch strings.ToLower(n.Value) {
		case "off", "on", "true", "false":
		default:
			c.add(n, "%s: %q is not known: write off, or a mapping with names and patterns", label, n.Value)
		}
		return
	case t == typeStrength && c.walkStrength(n, path):
		return
	case (t == typeLimits || t == typeApprove) && n.Kind == yaml.ScalarNode:
		return // limits: wait|stop, plan.approve: true: checked with the rest of the meaning
	case (t == typeNetwork || t == typeSandbox || t == typeChecksNet) && n.Kind == yaml.ScalarNode:
		return // the mode, checked with the rest of the meaning
	case t == typeChecksMode && n.Kind == yaml.MappingNode:
		c.walk(n, typeChecksNet, path) // checks.network: {mode, allow}
		return
	case t == typeStringList:
		if n.Kind == yaml.ScalarNode {
			return
		}
		if n.Kind != yaml.SequenceNode {
			c.add(n, "%s: want a string or a list of strings", label)
			return
		}
		for i, item := range n.Content {
			c.walk(item, reflect.TypeOf(""), fmt.Sprintf("%s[%d]", path, i))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.add(n, "%s: want a mapping of fields, got %s", label, kindName(n))
			return
		}
		fields := yamlFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if t == typeChecks && k.Value == "network_allow" {
				ok = false // checks.network's list, written inside it
			}
			if !ok {
				c.add(k, "unknown field %q in %s%s", k.Value, label, suggest(k.Value, fields))
				continue
			}
			if seen[k.Value] {
				c.add(k, "field %q appears twice in %s", k.Value, label)
			}
			seen[k.Value] = true
			c.walk(v, f.Type, join(path, k.Value))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.add(n, "%s: want a mapping, got %s", label, kindName(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			c.walk(v, t.Elem(), join(path, k.Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.add(n, "%s: want a list, got %s", label, kindName(n))
			return
		}
		for i, item := range n.Content {
			if item.Kind == yaml.ScalarNode && item.Tag == "!!null" && item.Value == "" {
				// A bare "-": yaml.v3 would drop it without a word.
				c.add(item, "%s: entry %d is empty: write it, or remove the line", label, i+1)
				continue
			}
			c.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			c.add(n, "%s: want a string, got %s", label, kindName(n))
		}
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			c.add(n, "%s: want a whole number, got %s", label, valueName(n))
		}
	case reflect.Float64:
		// Every float in a loop file is an amount of money in USD.
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			c.add(n, "%s: want an amount in USD from 0 to %s, got %s", label, maxMoneyText, valueName(n))
			return
		}
		var f float64
		if err := n.Decode(&f); err != nil || !ValidMoney(f) {
			c.add(n, "%s: %s is not an amount in USD: want a number from 0 to %s", label, n.Value, maxMoneyText)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			c.add(n, "%s: want true or false, got %s", label, valueName(n))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func valueName(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf("%q", n.Value)
	}
	return kindName(n)
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// suggest names the closest known field, for typos.
func suggest(got string, fields map[string]reflect.StructField) string {
	best, bestD := "", 3
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := editDistance(got, name); d < bestD {
			best, bestD = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known fields: %s)", strings.Join(names, ", "))
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Limits of durations and amounts of money in a loop file. A longer duration
// or a bigger amount is a typo, and would overflow further on.
const (
	MaxDuration  = 365 * 24 * time.Hour
	MaxMoneyUSD  = 1e6
	maxDays      = 365
	maxMoneyText = "1000000"
)

// ValidMoney reports whether f is an amount of money a loop accepts: a
// finite number from 0 to MaxMoneyUSD. Command-line flags that override a
// budget check theirs with it too.
func ValidMoney(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 && f <= MaxMoneyUSD
}

var yamlLine = regexp.MustCompile(`^line (\d+)(?:, column (\d+))?: `)

// decodeProblem is an error of decoding the checked node tree; its lines
// come from the nodes, so they are right.
func decodeProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if col == 0 {
			col = 1
		}
		return Problem{Line: line, Column: col, Msg: msg[len(m[0]):]}
	}
	return Problem{Line: 1, Column: 1, Msg: msg}
}

// readerErrors are yaml.v3's messages about bytes that are not UTF-8 or are
// characters YAML does not allow; it gives no position for them.
var readerErrors = []string{
	"invalid leading UTF-8 octet", "incomplete UTF-8 octet sequence", "invalid trailing UTF-8 octet",
	"invalid length of a UTF-8 sequence", "invalid Unicode character", "control characters are not allowed",
}

// syntaxProblem turns an error of parsing data as YAML into a problem at the
// place where the parser stopped.
//
// yaml.v3 cannot be trusted with that place. Its message names the line of
// the construct that encloses the error (the mapping, the quoted string)
// rather than the error's own, and for parser errors that line counts from
// 0: in the file `looprinter init` writes, which opens with a comment block,
// an indentation error anywhere in the top-level mapping comes out as the
// line before the first key (the blank line after the comments). It gives
// no line at all for an unknown anchor, a byte that is not UTF-8 or a
// control character, and never a column.
//
// So the position is found here. Bad bytes by scanning the bytes. Every
// other error by parsing prefixes of the file: the shortest prefix that
// fails with the very same message ends at the token where the parser
// stopped (the same tokens up to there give the same error; fewer lines
// give none, or another one). That takes a binary search over the lines,
// then one over the bytes of the line found: a few dozen parses, only when
// the file is already wrong.
func syntaxProblem(data []byte, err error) Problem {
	full := err.Error()
	msg := strings.TrimPrefix(full, "yaml: ")
	reported := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		reported, _ = strconv.Atoi(m[1])
	}
	for _, r := range readerErrors {
		if strings.Contains(msg, r) {
			if p, ok := badChar(data); ok {
				return p
			}
		}
	}
	p := Problem{Msg: "YAML syntax: " + msg}
	starts := lineStarts(data)
	// The message's line tells apart two errors of the same kind, except
	// when it is the end of the file: then it moves with the prefix (an
	// unclosed quote on the first line), and only the text is compared.
	atEnd := reported >= len(starts)-1
	fails := func(n int) bool {
		var node yaml.Node
		err := safeUnmarshal(data[:n], &node)
		if err == nil {
			return false
		}
		if atEnd {
			got := strings.TrimPrefix(err.Error(), "yaml: ")
			if m := yamlLine.FindStringSubmatch(got); m != nil {
				got = got[len(m[0]):]
			}
			return got == msg
		}
		return err.Error() == full
	}
	ends := append(append([]int{}, starts[1:]...), len(data))
	li := sort.Search(len(ends), func(i int) bool { return fails(ends[i]) })
	if li == len(ends) {
		// Not even the whole file fails the same way again (cannot happen
		// with a deterministic parser): fall back to the start of the file.
		p.Line, p.Column = 1, 1
		return p
	}
	start, end := starts[li], ends[li]
	e := start + sort.Search(end-start, func(i int) bool { return fails(start + i + 1) }) + 1
	if e > end {
		e = end
	}
	k := max(start, e-1) // the last byte read: back to the start of its character
	for k > start && !utf8.RuneStart(data[k]) {
		k--
	}
	p.Line = li + 1
	p.Column = utf8.RuneCount(data[start:k]) + 1
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		name = strings.TrimSuffix(name, "' referenced")
		if col, ok := aliasColumn(data[start:end], name); ok {
			p.Column = col
		}
		p.Msg = fmt.Sprintf("YAML: *%s refers to no anchor: define &%s before it", name, name)
	}
	return p
}

// safeUnmarshal is yaml.Unmarshal that turns a panic of the parser into an
// error, so that no input can crash a command that reads a loop file.
func safeUnmarshal(data []byte, out *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the YAML parser failed on this file: %v", r)
		}
	}()
	return yaml.Unmarshal(data, out)
}

// lineStarts gives the offset where each line begins; lines end at LF, CR
// LF or a lone CR, as in YAML.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case '\n':
			starts = append(starts, i+1)
		}
	}
	return starts
}

// aliasColumn finds the column of the alias *name in one line.
func aliasColumn(line []byte, name string) (int, bool) {
	alias := "*" + name
	for off := 0; ; {
		i := bytes.Index(line[off:], []byte(alias))
		if i < 0 {
			return 0, false
		}
		at := off + i
		after := at + len(alias)
		if after == len(line) || strings.IndexByte(" \t\r\n,[]{}", line[after]) >= 0 {
			return utf8.RuneCount(line[:at]) + 1, true
		}
		off = at + 1
	}
}

// badChar finds the first byte that is not UTF-8, or the first character
// YAML does not allow (control characters, U+FFFE, U+FFFF).
func badChar(data []byte) (Problem, bool) {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return Problem{}, false // UTF-16, which yaml.v3 reads itself
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return Problem{Line: line, Column: col, Msg: fmt.Sprintf("the file is not UTF-8: byte 0x%02x here starts no character; save the file as UTF-8", data[i])}, true
		case !yamlAllowed(r):
			what := "control character"
			if r > 0x7f && r != 0x85 && !(r >= 0x80 && r <= 0x9f) {
				what = "character"
			}
			return Problem{Line: line, Column: col, Msg: fmt.Sprintf("YAML does not allow the %s %U here; in a double-quoted string write it as \"\\u%04X\"", what, r, r)}, true
		}
		switch {
		case r == '\n', r == '\r' && (i+1 >= len(data) || data[i+1] != '\n'):
			line, col = line+1, 1
		default:
			col++
		}
		i += size
	}
	return Problem{}, false
}

func yamlAllowed(r rune) bool {
	switch {
	case r == 0x09, r == 0x0a, r == 0x0d:
	case r >= 0x20 && r <= 0x7e:
	case r == 0x85:
	case r >= 0xa0 && r <= 0xd7ff:
	case r >= 0xe000 && r <= 0xfffd:
	case r >= 0x10000 && r <= 0x10ffff:
	default:
		return false
	}
	return true
}

var dayDuration = regexp.MustCompile(`^(\d+)d$`)

// parseDuration reads a duration of the loop file: Go's form (90s, 20m,
// 1h30m) or whole days (2d), from 0 to MaxDuration. Its errors name the
// value and say what is wanted.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	tooLong := fmt.Errorf("%q is too long: a duration is at most %dd (%s)", s, maxDays, MaxDuration)
	if m := dayDuration.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > maxDays {
			return 0, tooLong
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if strings.Contains(err.Error(), "invalid duration") && durationShape.MatchString(s) {
			return 0, tooLong // time.ParseDuration's overflow
		}
		return 0, fmt.Errorf("%q is not a duration (write it like 90s, 20m, 4h or 2d)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: a duration is 0 or more", s)
	}
	if d > MaxDuration {
		return 0, tooLong
	}
	return d, nil
}

// durationShape is what time.ParseDuration accepts when the number is not
// too big.
var durationShape = regexp.MustCompile(`^\+?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))*$`)

// UnmarshalYAML reads a duration like 20m.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		// A TypeError lets yaml.v3 decode the rest of the file, so that the
		// other problems are found too.
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*d = Duration(v)
	return nil
}

// ParseDuration parses a duration as the loop file writes it (20m, 4h, 1d).
func ParseDuration(s string) (Duration, error) {
	d, err := parseDuration(s)
	return Duration(d), err
}

// UnmarshalYAML reads a string or a list of strings.
func (s *StringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" {
			*s = nil
			return nil
		}
		*s = StringList{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*s = list
	return nil
}
