package tells

import (
	"reflect"
	"testing"
)

// Imports lists what a file imports, as written, and says when it cannot
// know (a name computed at run time, a file it cannot read).
func TestImports(t *testing.T) {
	cases := []struct {
		path, src string
		mods      []string
		dynamic   bool
	}{
		{"a.py", "import os, sys as s\nimport a.b.c\n", []string{"os", "sys", "a.b.c"}, false},
		{"a.py", "from . import x\nfrom ..pkg.mod import (y as z, w)\nfrom .m import *\n", []string{".", ".x", "..pkg.mod", "..pkg.mod.y", "..pkg.mod.w", ".m"}, false},
		{"a.py", "from a import b; import c\nif x: import d\n", []string{"a", "a.b", "c", "d"}, false},
		{"a.py", "x = 1\nimport_module = 2\nfrom = 3\n", nil, false},
		{"a.py", "import importlib\nm = importlib.import_module('pkg.mod')\nn = __import__(\"other\", globals())\n", []string{"importlib", "pkg.mod", "other"}, false},
		{"a.py", "import importlib\nm = importlib.import_module(name)\n", []string{"importlib"}, true},
		{"a.py", "import importlib.util as u\ns = u.spec_from_file_location('m', 'm.py')\n", []string{"importlib.util"}, true},
		{"a.py", "import runpy\nrunpy.run_path('x.py')\n", []string{"runpy"}, true},
		{"a.py", "import runpy\nrunpy.run_module('pkg.main')\n", []string{"runpy", "pkg.main"}, false},
		{"a.py", "exec(code)\n", nil, true},
		{"a.py", "x.eval(code)\neval\n", nil, false},
		{"a.py", "s = 'unterminated\n", nil, true},
		{"a.js", "const a = require('./a');\nimport b from \"./b.js\";\nimport './side.css';\nexport { c } from './c';\nconst d = await import('./d');\n", []string{"./a", "./b.js", "./side.css", "./c", "./d"}, false},
		{"a.ts", "const a = require(name);\n", nil, true},
		{"a.js", "const a = require();\nx.require(name);\nobj.import(name);\n", nil, false},
		{"a.js", "const m = import(`./${n}`);\n", nil, true},
		{"a.js", "const m = require(`./x`);\n", []string{"./x"}, false},
		{"a.js", "const m = require(`./${n}`);\n", nil, true},
		{"a.js", "eval(code);\nnew Function('return 1');\n", nil, true},
		{"a.js", "const from = 1;\nconst r = /from/;\n", nil, false},
		{"a.js", "const s = 'unterminated\n", nil, true},
		{"a.go", "package a\nimport \"os\"\n", nil, false},
	}
	for _, c := range cases {
		mods, dynamic := Imports(c.path, []byte(c.src))
		if !reflect.DeepEqual(mods, c.mods) || dynamic != c.dynamic {
			t.Errorf("%s %q: got %q %v, want %q %v", c.path, c.src, mods, dynamic, c.mods, c.dynamic)
		}
	}
}
