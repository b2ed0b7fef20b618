package guard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// The defaults protect the loop file and the programs a gate runs, never the
// data a check only reads: that is often the deliverable. An executable file
// or a script extension alone does not make a file a program: only its
// place in the command does.
func TestProtectDefaultsScriptsNotData(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"check.sh": 0o644, "run_tests": 0o755, "tests/run.rb": 0o644, "lib/helper.txt": 0o644,
		"out/answer.txt": 0o644, "tests/expected.txt": 0o644, "data.json": 0o644, "tool.sh": 0o755, "app.js": 0o755,
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	loopFile := `objective: x
verify:
  - sh check.sh
  - ./run_tests --fast
  - ruby tests/run.rb data.json
  - cmp out/answer.txt tests/expected.txt
  - test -s out/answer.txt && lib/helper.txt
  - cat tool.sh
  - node --check app.js
`
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(loopFile), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := spec.Load(filepath.Join(dir, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := resolved(t, dir, l)
	wantProtected(t, got, map[string]string{
		"loop.yaml": "the loop file", "check.sh": "gate program", "run_tests": "gate program",
		"tests/run.rb": "gate program", "lib/helper.txt": "gate program",
	}, "out/answer.txt", "tests/expected.txt", "data.json", "tool.sh", "app.js")

	off := false
	l.ProtectDefaults = &off
	l.Protect = []string{"tests/**"}
	got = resolved(t, dir, l)
	wantProtected(t, got, map[string]string{"tests/expected.txt": "protect[0]", "tests/run.rb": "protect[0]", "loop.yaml": "the loop file"},
		"check.sh", "run_tests", "lib/helper.txt")
	if len(got) != 3 {
		t.Errorf("protect_defaults: false still adds defaults: %v", keys(got))
	}
}
