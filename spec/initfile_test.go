package spec_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/internal/initwiz"
	"github.com/looprinter/looprinter/spec"
)

// initFile is the loop file `looprinter init --objective x --verify "go
// test ./..." --yes` writes: a comment header, then commented fields.
func initFile(t *testing.T) []string {
	a := initwiz.Defaults()
	a.Objective = "x"
	a.Verify = []string{"go test ./..."}
	a.Clean()
	data := string(initwiz.Render(a))
	if _, err := spec.Parse([]byte(data), "loop.yaml"); err != nil {
		t.Fatalf("the init file does not parse: %v", err)
	}
	lines := strings.Split(data, "\n")
	if !strings.HasPrefix(lines[0], "#") || !strings.HasPrefix(lines[1], "#") {
		t.Fatalf("the init file no longer opens with a comment header: %q", lines[:2])
	}
	return lines
}

func parseLines(lines []string) *spec.Error {
	_, err := spec.Parse([]byte(strings.Join(lines, "\n")), "loop.yaml")
	var se *spec.Error
	if errors.As(err, &se) {
		return se
	}
	return nil
}

var nestedKey = regexp.MustCompile(`^  [a-z_]+:`)

// An indentation error deep in the file init writes was reported on the
// blank line after the comment header (yaml.v3 names the start of the
// enclosing mapping, counted from 0). Every such error is now reported on
// its own line: one space too few or too many, or a tab, on each field
// that follows a sibling field.
func TestInitFileIndentationErrors(t *testing.T) {
	lines := initFile(t)
	checked := 0
	for i, line := range lines {
		prev := i - 1
		for prev >= 0 && (strings.TrimSpace(lines[prev]) == "" || strings.HasPrefix(strings.TrimSpace(lines[prev]), "#")) {
			prev--
		}
		if !nestedKey.MatchString(line) || prev < 0 || !nestedKey.MatchString(lines[prev]) {
			continue
		}
		checked++
		for _, v := range []struct {
			name, line string
			col        int // 0: any column in the line
		}{
			{"one space too few", line[1:], 2},
			{"one space too many", " " + line, 0},
			{"a tab", "\t" + line[2:], 1},
		} {
			broken := append([]string{}, lines...)
			broken[i] = v.line
			se := parseLines(broken)
			if se == nil || len(se.Problems) != 1 {
				t.Errorf("line %d with %s: want one problem, got %v", i+1, v.name, se)
				continue
			}
			p := se.Problems[0]
			if p.Line != i+1 || (v.col != 0 && p.Column != v.col) || p.Column < 1 || p.Column > len(v.line)+1 {
				t.Errorf("line %d with %s (%q): reported at %d:%d: %s", i+1, v.name, v.line, p.Line, p.Column, p.Msg)
			}
			if !strings.HasPrefix(p.Msg, "YAML syntax: ") {
				t.Errorf("line %d with %s: message %q", i+1, v.name, p.Msg)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d fields checked: the init file changed shape", checked)
	}
}

// The issue's own case: budget.wall one space too deep, in the init file.
func TestInitFileWallTooDeep(t *testing.T) {
	lines := initFile(t)
	for i, line := range lines {
		if strings.HasPrefix(line, "  wall:") {
			lines[i] = " " + line
			se := parseLines(lines)
			if se == nil {
				t.Fatal("no error")
			}
			want := "loop.yaml:" + strconv.Itoa(i+1) + ":4: YAML syntax: did not find expected key"
			if !strings.Contains(se.Error(), want) {
				t.Errorf("want %q in:\n%s", want, se)
			}
			return
		}
	}
	t.Fatal("no wall: line in the init file")
}

// Errors yaml.v3 gives no position for, deep in the init file.
func TestInitFileUnpositionedErrors(t *testing.T) {
	for _, c := range []struct {
		prefix, with string
		col          int
		want         string
	}{
		{"  wall:", "  wall: *four_hours", 9, "*four_hours refers to no anchor"},
		{"  - \"go test", "  - \"go\x07test\"", 8, "control character U+0007"},
		{"  - \"go test", "  - \"go\xc3test\"", 8, "not UTF-8"},
		{"  cycles:", "  cycles: 10\x1b[0m", 13, "control character U+001B"},
	} {
		lines := initFile(t)
		found := false
		for i, line := range lines {
			if strings.HasPrefix(line, c.prefix) {
				found = true
				lines[i] = c.with
				se := parseLines(lines)
				if se == nil || len(se.Problems) != 1 {
					t.Errorf("%q: want one problem, got %v", c.with, se)
					break
				}
				if p := se.Problems[0]; p.Line != i+1 || p.Column != c.col || !strings.Contains(p.Msg, c.want) {
					t.Errorf("%q: got %s, want %d:%d: ...%s", c.with, p, i+1, c.col, c.want)
				}
				break
			}
		}
		if !found {
			t.Errorf("no line %q in the init file", c.prefix)
		}
	}
}
