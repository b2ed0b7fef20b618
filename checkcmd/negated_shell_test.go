package checkcmd

import (
	"strings"
	"testing"
)

// A negated program the shell could not start (127 not found, 126 not
// executable) turned into a pass by `!`: the check judged nothing.
func TestNegatedShellCannotRun(t *testing.T) {
	for _, tc := range []struct{ line, out, want string }{
		{"! ./lint.sh", "/bin/sh: 1: ./lint.sh: not found\n", "`./lint.sh` could not run (/bin/sh: 1: ./lint.sh: not found), and `!` turns the shell's exit 127 into a pass"},
		{"! nosuchcmd -q x", "bash: line 1: nosuchcmd: command not found\n", "exit 127"},
		{"! ./lint.sh", "sh: 1: ./lint.sh: Permission denied\n", "exit 126"},
		{"cd src && ! ../bin/check a", "/bin/sh: 1: ../bin/check: No such file or directory\n", "`../bin/check` could not run"},
		{"! ./lint.sh", "/bin/sh: 1: ./other.sh: not found\n", ""},
		{"./lint.sh", "/bin/sh: 1: ./lint.sh: not found\n", ""},
		{"! ./lint.sh", "lint found nothing\n", ""},
		{"! ./lint.sh", "  /bin/sh: 1: ./lint.sh: not found\n", ""},
	} {
		got := NegatedRunFailed(tc.line, tc.out)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q / %q: %q, want %q", tc.line, tc.out, got, tc.want)
		}
	}
}
