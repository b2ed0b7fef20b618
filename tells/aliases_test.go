package tells

import "testing"

// Aliases made by assignment are resolved before matching (issue 45).
func TestScanAssignAliases(t *testing.T) {
	cases := []struct {
		name, path, src string
		want            []want
	}{
		{"go exit kept in a variable", "a/a.go", "package a\nimport \"os\"\nvar bye = os.Exit\nfunc init() { bye(0) }\n", []want{{4, ExitsEarly}}},
		{"go exit through x/sys/unix", "a/a.go", "package a\nimport \"golang.org/x/sys/unix\"\nfunc init() { unix.Exit(0) }\n", []want{{3, ExitsEarly}}},
		{"go variable holding exit, called only from main", "a/main.go", "package main\nimport \"os\"\nvar bye = os.Exit\nfunc main() { bye(0) }\n", nil},
		{"go variable of another value called from init", "a/a.go", "package a\nimport \"strings\"\nvar up = strings.ToUpper\nvar x string\nfunc init() { x = up(\"a\") }\n", nil},
		{"go variable blank", "a/a.go", "package a\nimport \"os\"\nvar _ = os.Exit\nfunc _() {}\nfunc init() {}\n", nil},

		{"py module kept in a name", "a/a.py", "import sys\nx = sys\ndef f():\n    return x.modules\n", []want{{4, ReadsRunContext}}},
		{"py framework attribute kept in a name", "a/a.py", "import unittest\nc = unittest.case\nc.TestCase.assertEqual = None\n", []want{{3, PatchesTestFramework}}},
		{"py import_module", "a/a.py", "import importlib\nc = importlib.import_module('unittest.case')\nc.TestCase.assertEqual = None\n", []want{{2, AsksIfUnderTest}, {3, PatchesTestFramework}}},
		{"py __import__", "a/a.py", "s = __import__('sys')\nA = s.argv\n", []want{{2, ReadsRunContext}}},
		{"py import_module by a computed name", "a/a.py", "import importlib\nc = importlib.import_module(N)\nc.TestCase.x = 1\n", nil},
		{"py a read kept in a name is told once", "a/a.py", "import sys\nm = sys.modules\nn = len(m)\n", []want{{2, ReadsRunContext}}},
		{"py an assignment that is more than a name", "a/a.py", "import os\np = os.path.join('a', 'b')\nq = p.upper\n", nil},

		{"js assigned after its declaration", "a/a.js", "let a;\na = require('assert');\na.equal = () => {};\n", []want{{3, PatchesTestFramework}}},
		{"js assigned after a statement", "a/a.js", "let a; a = require('assert'); a.ok = 1;\n", []want{{1, PatchesTestFramework}}},
		{"js assigned on a line after a call", "a/a.js", "let a\nf()\na = require('assert')\na.ok = 1\n", []want{{4, PatchesTestFramework}}},
		{"ts import equals", "a/a.ts", "import assert = require('assert');\nassert.equal = () => {};\n", []want{{2, PatchesTestFramework}}},
		{"js module.require", "a/a.js", "const m = module.require('node:assert');\nm.equal = 1;\nmodule.require('chai').expect = 1;\n", []want{{2, PatchesTestFramework}, {3, PatchesTestFramework}}},
		{"js module.require of another module", "a/a.js", "module.require('lodash').x = 1;\nconst l = module.require('lodash');\nl.y = 1;\n", nil},
		{"js globalThis kept in a variable", "a/a.js", "const g = globalThis;\nconst d = g.describe;\nconst h = global;\nconst e = h.it;\n", []want{{2, ReadsRunContext}, {4, ReadsRunContext}}},
		{"js a property assigned, not a name", "a/a.js", "const o = {};\no.a = require('assert');\na.equal = 1;\n", nil},
		{"js a continued expression", "a/a.js", "const x = 1 +\ny = process;\nconst z = y.argv;\n", nil},
		{"js globalThis property kept", "a/a.js", "const d = globalThis.document;\nconst e = d.describe;\nconst f = globalThis[k];\n", []want{{3, ReadsRunContext}}},
		{"js global indexed kept", "a/a.js", "const d = global['document'];\nconst e = d.it;\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.path, c.src, c.want) })
	}
}
