package spec

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	typeOfLoop     = reflect.TypeOf(Loop{})
	typeDuration   = reflect.TypeOf(Duration(0))
	typeStringList = reflect.TypeOf(StringList(nil))
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
			c.add(n, "%s: %q is not a duration (write it like 90s, 20m or 4h)", label, n.Value)
		}
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
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			c.add(n, "%s: want a number, got %s", label, valueName(n))
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

var yamlLine = regexp.MustCompile(`line (\d+)(?:, column (\d+))?: (.*)`)

func syntaxProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if col == 0 {
			col = 1
		}
		return Problem{Line: line, Column: col, Msg: "YAML syntax: " + m[3]}
	}
	return Problem{Msg: "YAML syntax: " + msg}
}

var dayDuration = regexp.MustCompile(`^(\d+)d$`)

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if m := dayDuration.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration")
	}
	return d, nil
}

// UnmarshalYAML reads a duration like 20m.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration", n.Line, n.Value)
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
