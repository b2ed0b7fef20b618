package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A negated grep told to keep quiet (-s) about a file that is not there
// judged nothing; one whose files are there, or that is not quiet (its
// message is read from the output), or that reads an expansion, is not
// judged here.
func TestNegatedGrepMissing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "b.txt"), []byte("x\n"), 0o644)
	for _, tc := range []struct{ line, want string }{
		{"! grep -qs TODO missing.txt", "`grep -qs TODO missing.txt` could not read missing.txt (it is not there; -s keeps grep quiet about it), and `!` turns its exit 2 into a pass"},
		{"! grep -q -s TODO a.txt missing.txt", "could not read missing.txt"},
		{"! grep --no-messages -e TODO missing.txt", "could not read missing.txt"},
		{"! grep -rsq TODO missing/", "could not read missing/"},
		{"cd src && ! grep -qs TODO a.txt", "could not read a.txt"},
		{"! grep -qs TODO a.txt", ""},
		{"cd src && ! grep -qs TODO b.txt", ""},
		{"! grep -q TODO missing.txt", ""},
		{"grep -qs TODO missing.txt", ""},
		{"! grep -qs TODO $FILE", ""},
		{"! grep -qs TODO *.txt", ""},
		{"! cat missing.txt | grep -qs TODO", ""},
		{"cd \"$X\" && ! grep -qs TODO missing.txt", ""},
		{"! grep -qs -m 1 TODO a.txt", ""},
		{"! grep -qsm1 TODO a.txt", ""},
		{"make gen && ! grep -qs TODO missing.txt", ""},
		{"true; ! grep -qs TODO missing.txt", ""},
	} {
		got := NegatedGrepMissing(tc.line, dir)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
		}
	}
}
