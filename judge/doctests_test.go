package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

const doctestModule = `def add(a, b):
    """Add.

    >>> add(1, 2)
    3
    >>> add(2,
    ...     2)
    4

    Text between.

    >>> add(0, 0)
    0
    """
    return a - b
`

func TestDoctestSpans(t *testing.T) {
	got := doctestSpans([]byte(doctestModule))
	var texts []string
	for _, s := range got {
		texts = append(texts, doctestModule[s[0]:s[1]])
	}
	want := []string{"    >>> add(1, 2)\n    3\n    >>> add(2,\n    ...     2)\n    4\n", "    >>> add(0, 0)\n    0\n"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Fatalf("spans %q, want %q", texts, want)
	}
	if got := doctestSpans([]byte("x = 1\n>>> y\n2")); len(got) != 1 || got[0] != [2]int{6, 13} {
		t.Fatalf("an example to the end of the file: %v", got)
	}
	if got := doctestSpans([]byte("def f():\n    '''No examples.'''\n")); len(got) != 0 {
		t.Fatalf("no examples: %v", got)
	}
}

func TestDoctestsChanged(t *testing.T) {
	fixed := strings.Replace(doctestModule, "return a - b", "return a + b", 1)
	if note := InlineTestsChanged("calc.py", []byte(doctestModule), []byte(fixed)); note != "" {
		t.Fatalf("the code fixed: %s", note)
	}
	moved := "import math\n\n\n" + doctestModule + "\n\ndef sub(a, b):\n    \"\"\"\n    >>> sub(1, 1)\n    0\n    \"\"\"\n    return a - b\n"
	if note := InlineTestsChanged("calc.py", []byte(doctestModule), []byte(moved)); note != "" {
		t.Fatalf("examples moved and added: %s", note)
	}
	expected := strings.Replace(doctestModule, "    3\n", "    -1\n", 1)
	note := InlineTestsChanged("calc.py", []byte(doctestModule), []byte(expected))
	if !strings.HasPrefix(note, "4:1: edits_inline_tests: the doctest example at lines 4-8 ") {
		t.Fatalf("an expected value rewritten: %q", note)
	}
	gone := strings.Replace(doctestModule, "    >>> add(0, 0)\n    0\n", "", 1)
	if note := InlineTestsChanged("calc.py", []byte(doctestModule), []byte(gone)); !strings.HasPrefix(note, "12:1: ") || !strings.Contains(note, "lines 12-13") {
		t.Fatalf("an example removed: %q", note)
	}
	twice := doctestModule + "\ndef g():\n    \"\"\"\n    >>> add(0, 0)\n    0\n    \"\"\"\n"
	dropOne := strings.Replace(twice, "    >>> add(0, 0)\n    0\n", "", 1)
	if note := InlineTestsChanged("calc.py", []byte(twice), []byte(dropOne)); note == "" {
		t.Fatal("one of two equal examples removed: not seen")
	}
}

func TestRunsDoctests(t *testing.T) {
	dir := t.TempDir()
	if RunsDoctests(nil, dir) || RunsDoctests(&spec.Loop{Verify: []string{"python3 -m pytest -q"}}, dir) {
		t.Fatal("no check runs doctests")
	}
	for _, l := range []*spec.Loop{
		{Verify: []string{"python3 -m doctest calc.py"}},
		{ObjectiveVerify: []string{"pytest --doctest-modules"}},
		{HoldoutVerify: []string{"python3 -m xdoctest calc"}},
	} {
		if !RunsDoctests(l, dir) {
			t.Errorf("%+v: doctests not seen", l)
		}
	}
	l := &spec.Loop{Verify: []string{"python3 -m pytest -q"}}
	os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[tool.pytest.ini_options]\naddopts = \"--doctest-modules\"\n"), 0o644)
	if !RunsDoctests(l, dir) {
		t.Error("pytest's addopts in pyproject.toml: not seen")
	}
}
