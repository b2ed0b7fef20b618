package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
)

// The data files a Python or JS test names (relative to the test's folder
// or to the top), and the snapshot folders of each ecosystem, are
// protected when they exist; source the tests import, a folder of source,
// a new case, and a file no test names stay free.
func TestTestFixturesProtected(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	write("package.json", "{}")
	write("calc.py", "def add(a, b):\n    return a + b\n")
	write("test_calc.py", "import json, os\nHERE = os.path.dirname(__file__)\nCASES = json.load(open(os.path.join(HERE, 'cases', 'add.json')))\nG = open('golden.txt').read()\nS = 'calc.py'\nL = 'lib'\nU = '../up.json'\nF = f'{HERE}/x.json'\n")
	write("cases/add.json", "[]")
	write("cases/deep/more.json", "[]")
	write("golden.txt", "x")
	write("lib/helper.py", "X = 1\n")
	write("lib/data.json", "{}")
	write("web/add.test.js", "const fx = require('./fixtures/one.json');\nconst re = /fixtures/;\nconst t = `./${name}.json`;\n")
	write("web/fixtures/one.json", "{}")
	write("web/other.json", "{}")
	write("web/__snapshots__/add.test.js.snap", "exports[`x`] = 1;")
	write("py/__snapshots__/test_x.ambr", "x")
	write("notes.json", "{}")
	write("x.json", "{}")
	r, err := NewProtectRules(dir, &spec.Loop{})
	if err != nil {
		t.Fatal(err)
	}
	for rel, rule := range map[string]string{
		"cases/add.json": "test-data-read", "cases/deep/more.json": "test-data-read", "golden.txt": "test-data-read",
		"web/fixtures/one.json": "test-data-read", "web/__snapshots__/add.test.js.snap": "js-test",
		"py/__snapshots__/test_x.ambr": "test snapshots",
	} {
		if p, ok := r.Rule(rel); !ok || !strings.Contains(p.Rule, rule) {
			t.Errorf("%s: %v %q, want %s", rel, ok, p.Rule, rule)
		}
	}
	for _, rel := range []string{"calc.py", "lib/helper.py", "lib/data.json", "web/other.json", "notes.json", "x.json", "cases/new.json"} {
		if p, ok := r.Rule(rel); ok {
			t.Errorf("%s protected: %q", rel, p.Rule)
		}
	}
	// Without a test file naming them, the same files are free.
	os.Remove(filepath.Join(dir, "test_calc.py"))
	r, _ = NewProtectRules(dir, &spec.Loop{})
	if p, ok := r.Rule("cases/add.json"); ok {
		t.Errorf("no test names cases/: protected %q", p.Rule)
	}
}

// Snapshots are protected in each ecosystem (insta's under a crate too).
func TestSnapshotRules(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	for _, f := range []string{"go.mod", "crate/Cargo.toml", "crate/src/snapshots/crate__add.snap", "pkg/__snapshots__/TestAdd.snap", "crate/src/snapshots/notes.txt"} {
		write(f)
	}
	r, err := NewProtectRules(dir, &spec.Loop{})
	if err != nil {
		t.Fatal(err)
	}
	for rel, rule := range map[string]string{"crate/src/snapshots/crate__add.snap": "rust-test-snapshots", "pkg/__snapshots__/TestAdd.snap": "go-test-snapshots"} {
		if p, ok := r.Rule(rel); !ok || !strings.Contains(p.Rule, rule) {
			t.Errorf("%s: %v %q, want %s", rel, ok, p.Rule, rule)
		}
	}
	if p, ok := r.Rule("crate/src/snapshots/notes.txt"); ok {
		t.Errorf("notes beside snapshots protected: %q", p.Rule)
	}
	if p, ok := r.ProtectNew("pkg/__snapshots__/TestNew.snap"); ok {
		t.Errorf("a new snapshot protected: %q", p.Rule)
	}
}
