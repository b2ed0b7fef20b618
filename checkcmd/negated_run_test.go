package checkcmd

import (
	"strings"
	"testing"
)

// A negated check that passed because its negated program could not run
// judged nothing; one whose program ran and found nothing did.
func TestNegatedRunFailed(t *testing.T) {
	for _, tc := range []struct{ line, out, want string }{
		{"! git grep -q TODO", "fatal: not a git repository (or any of the parent directories): .git\n", "`git` could not run (fatal: not a git repository"},
		{"! grep -q TODO a.txt", "grep: a.txt: No such file or directory\n", "`grep` could not run (grep: a.txt: No such file or directory), and `!` turns its failure into a pass"},
		{"cd src && ! /usr/bin/grep -rq TODO .", "grep: x: Permission denied\n", "`grep` could not run"},
		{"! cat log | grep -q panic", "cat: log: No such file or directory\n", "`cat` could not run"},
		{"! grep -q TODO a.txt", "", ""},
		{"grep -q TODO a.txt", "grep: a.txt: No such file or directory\n", ""},
		{"! grep -q TODO a.txt", "the grep: line of a test\n", ""},
		{"! git grep -q TODO", "error: something\nfatalistic: no\n", ""},
		{"! ( grep -q TODO a.txt", "grep: a.txt: x\n", ""},
	} {
		got := NegatedRunFailed(tc.line, tc.out)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q / %q: %q, want %q", tc.line, tc.out, got, tc.want)
		}
	}
}
