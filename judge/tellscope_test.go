package judge

import (
	"os"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/spec"
	"github.com/looprinter/looprinter/tells"
)

// mapTree is a Tree over files in memory.
func mapTree(files map[string]string) Tree {
	return Tree{
		Read: func(rel string) ([]byte, bool) { s, ok := files[rel]; return []byte(s), ok },
		List: func(dir string) (fs, ds []string) {
			seenDir := map[string]bool{}
			for f := range files {
				d := path.Dir(f)
				if d == "." {
					d = ""
				}
				if d == dir {
					fs = append(fs, path.Base(f))
					continue
				}
				prefix := dir + "/"
				if dir == "" {
					prefix = ""
				}
				if strings.HasPrefix(f, prefix) {
					sub, _, _ := strings.Cut(strings.TrimPrefix(f, prefix), "/")
					if !seenDir[sub] {
						seenDir[sub] = true
						ds = append(ds, sub)
					}
				}
			}
			sort.Strings(fs)
			sort.Strings(ds)
			return fs, ds
		},
	}
}

func reads(rel string) []tells.Tell {
	return []tells.Tell{{Line: 1, Column: 1, Kind: tells.ReadsRunContext, What: "x"}, {Line: 2, Column: 1, Kind: tells.ExitsEarly, What: "y"}}
}

// A read of the run's context is refused in a library the checks import
// and only noted elsewhere; other tells are refused wherever they are.
func TestTellScopeSplit(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"python3 -m unittest", "node --test", "python3 tools/check.py"}})
	files := map[string]string{
		"calc.py":             "import os\n",
		"pkg/__init__.py":     "",
		"pkg/core.py":         "from .util import f\n",
		"pkg/util.py":         "",
		"pkg/unused.py":       "",
		"settings.py":         "",
		"tools/check.py":      "import helper_mod\n",
		"tools/helper_mod.py": "",
		"test_calc.py":        "import calc\nfrom pkg import core\n",
		"src/add.js":          "module.exports = require('./lib/x');\n",
		"src/lib/x.js":        "",
		"src/other.js":        "",
		"add.test.js":         "const { add } = require('./src/add');\n",
		"cmd/main.go":         "package main\n",
		"lib/lib.go":          "package lib\n",
	}
	s := j.NewTellScope(mapTree(files))
	for rel, lib := range map[string]bool{
		"calc.py": true, "pkg/core.py": true, "pkg/util.py": true, "pkg/__init__.py": true, "tools/helper_mod.py": true,
		"pkg/unused.py": false, "settings.py": false,
		"src/add.js": true, "src/lib/x.js": true, "src/other.js": false,
		"cmd/main.go": false, "lib/lib.go": true,
	} {
		refused, noted := s.Split(rel, []byte(files[rel]), reads(rel))
		wantRefused, wantNoted := 1, 1
		if lib {
			wantRefused, wantNoted = 2, 0
		}
		if len(refused) != wantRefused || len(noted) != wantNoted {
			t.Errorf("%s: refused %v, noted %v (library %v)", rel, refused, noted, lib)
		}
	}
}

// Where the reading cannot tell what a module reaches (an import computed
// at run time, inline code in a check), every module counts as imported.
func TestTellScopeConservative(t *testing.T) {
	files := map[string]string{
		"test_a.py": "import importlib\nm = importlib.import_module(name)\n",
		"lone.py":   "",
	}
	j, _ := newJudge(t, &spec.Loop{Verify: []string{"python3 -m pytest"}})
	if r, _ := j.NewTellScope(mapTree(files)).Split("lone.py", nil, reads("lone.py")); len(r) != 2 {
		t.Errorf("a computed import: %v", r)
	}
	files["test_a.py"] = "import os\n"
	if r, _ := j.NewTellScope(mapTree(files)).Split("lone.py", nil, reads("lone.py")); len(r) != 1 {
		t.Errorf("nothing imports lone.py: %v", r)
	}
	j2, _ := newJudge(t, &spec.Loop{Verify: []string{"python3 -c 'import lone'"}})
	if r, _ := j2.NewTellScope(mapTree(files)).Split("lone.py", nil, reads("lone.py")); len(r) != 2 {
		t.Errorf("inline code in a check: %v", r)
	}
	// A holdout file, hidden from the view, is read where the judge keeps it.
	j3, _ := newJudge(t, &spec.Loop{Verify: []string{"true"}})
	if err := os.WriteFile(j3.Dir+"/hold_check.py", []byte("import lone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j3.holdouts = []string{"hold_check.py"}
	if r, _ := j3.NewTellScope(mapTree(files)).Split("lone.py", nil, reads("lone.py")); len(r) != 2 {
		t.Errorf("imported by a holdout file: %v", r)
	}
}

// A Go file's siblings are its folder's other Go files in the tree.
func TestTellScopeSiblings(t *testing.T) {
	j, _ := newJudge(t, &spec.Loop{})
	s := j.NewTellScope(mapTree(map[string]string{"p/a.go": "package p\n", "p/b.go": "package p\n", "p/c.txt": "", "q/d.go": ""}))
	got := s.Siblings("p/a.go")()
	if len(got) != 1 || got["b.go"] == nil {
		t.Fatalf("siblings: %v", got)
	}
	if s.Siblings("p/a.py") != nil {
		t.Fatal("siblings of a Python file")
	}
}
