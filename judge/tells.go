package judge

import (
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/looprinter/looprinter/tells"
)

// No code the agent wrote decides a check's output, as far as the judge
// can see it. A non-test source file an agent run added or changed is read
// for the tells of code that asks whether it runs under a test, prints a
// test runner's framing or leaves before the runner does (package tells);
// a tell the file did not have before the run refuses the change like an
// edit of a protected file. The reading costs O(changed files).

// maxTellBytes bounds a file the judge reads for tells: a larger source
// file is read up to here (a tell past it is not seen; such files are
// generated, and the audit is told of them).
const maxTellBytes = 2 << 20

// ScansForTells says whether a path is source the judge reads for tells: a
// language it knows, not a test file (tests are protected by other means),
// and not in a dependency or generated folder.
func ScansForTells(rel string) bool {
	if tells.Language(rel) == "" || tells.IsTestFile(rel) {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case "node_modules", "vendor", ".venv", "venv", "site-packages", "testdata":
			return false
		}
	}
	return true
}

// NewTells is what cur tells that old (the file before the run; nil when
// it is new) did not: each tell of cur whose kind and excerpt old lacks as
// often. Pre-existing code keeps its tells; an unreadable file counts only
// when it was readable before.
func NewTells(rel string, old, cur []byte) []tells.Tell {
	return NewTellsThan(rel, func() []byte { return old }, cur)
}

// NewTellsThan is NewTells with the file before the run read only when cur
// tells something (most changes tell nothing: one read, not two).
func NewTellsThan(rel string, before func() []byte, cur []byte) []tells.Tell {
	return NewTellsAround(rel, before, cur, tells.Around{})
}

// NewTellsAround is NewTellsThan with what the scan may read of the
// file's surroundings (a Go file's package: TellScope.Siblings); both
// versions of the file are read in the same surroundings.
func NewTellsAround(rel string, before func() []byte, cur []byte, around tells.Around) []tells.Tell {
	if len(cur) > maxTellBytes {
		cur = cur[:maxTellBytes]
	}
	got := tells.ScanIn(rel, cur, around)
	if len(got) == 0 {
		return nil
	}
	old := before()
	had := map[string]int{}
	if old != nil {
		if len(old) > maxTellBytes {
			old = old[:maxTellBytes]
		}
		for _, t := range tells.ScanIn(rel, old, around) {
			had[string(t.Kind)+"\x00"+t.What]++
		}
	}
	var out []tells.Tell
	for _, t := range got {
		k := string(t.Kind) + "\x00" + t.What
		if had[k] > 0 {
			had[k]--
			continue
		}
		if t.Kind == tells.Unreadable && old == nil {
			continue // a new file the scanners cannot read is no tell of gaming
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Line < out[k].Line })
	return out
}

// TellNote is a file's new tells in one line, for a violation and the
// failure signal: "3:5 asks_if_under_test \"testing.Testing()\"; …".
func TellNote(ts []tells.Tell) string {
	var parts []string
	for i, t := range ts {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, t.String())
	}
	return strings.Join(parts, "; ")
}

// TellsAllowed says whether the loop file lets rel keep tells
// (checks.allow_tells: globs of files whose tells are known and honest, a
// program that re-executes itself as a helper, say).
func (j *Judge) TellsAllowed(rel string) bool {
	for _, g := range j.spec().Checks.AllowTells {
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), rel); ok {
			return true
		}
	}
	return false
}
