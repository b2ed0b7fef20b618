package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The defaults protect the loop file and the scripts a gate runs, never the
// data a check only reads: that is often the deliverable.
func TestProtectDefaultsScriptsNotData(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"loop.yaml": 0o644, "check.sh": 0o644, "run_tests": 0o755, "tests/run.py": 0o644, "lib/helper.txt": 0o644,
		"out/answer.txt": 0o644, "tests/expected.txt": 0o644, "data.json": 0o644,
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	gates := []string{
		"sh check.sh",
		"./run_tests --fast",
		"python3 tests/run.py data.json",
		"cmp out/answer.txt tests/expected.txt",
		"test -s out/answer.txt && lib/helper.txt",
	}
	got := strings.Join(protectPatterns(dir, filepath.Join(dir, "loop.yaml"), nil, true, gates), " ")
	for _, want := range []string{"loop.yaml", "check.sh", "run_tests", "tests/run.py", "lib/helper.txt"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("%s is not protected: %s", want, got)
		}
	}
	for _, not := range []string{"out/answer.txt", "tests/expected.txt", "data.json"} {
		if strings.Contains(" "+got+" ", " "+not+" ") {
			t.Errorf("%s is protected, but a gate only reads it: %s", not, got)
		}
	}
	if off := protectPatterns(dir, filepath.Join(dir, "loop.yaml"), []string{"tests/**"}, false, gates); strings.Join(off, " ") != "tests/**" {
		t.Errorf("protect_defaults: false still adds defaults: %v", off)
	}
}
