package checkcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mocha 12 (real output, testdata/collect/mocha12-none-ts.txt) names no
// pattern when its test folder is there but holds no file of its
// extensions, as in a TypeScript project without mocha's .ts setup: it
// found no tests all the same.
func TestCouldNotCollectMochaNoPattern(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "collect", "mocha12-none-ts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{string(b), "\x1b[31m" + strings.TrimSuffix(string(b), "\n") + "\x1b[39m\n"} {
		nc, ok := CouldNotCollect(out, 1, t.TempDir())
		if !ok || nc.Why != "the runner found no tests: Error: No test files found" || nc.Fix != NoTestsFix {
			t.Errorf("%q: %v %+v", out, ok, nc)
		}
	}
	// A test's own error that merely begins so is no such line.
	if nc, ok := CouldNotCollect("Error: No test files foundation\n", 1, t.TempDir()); ok {
		t.Errorf("collected: %+v", nc)
	}
}
