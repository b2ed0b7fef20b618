package tells

import (
	"strings"
	"testing"
)

// Cases that pin the edges of the context scanners: each is what a
// hostile library's code looks like (split so that no single piece gives
// it away, cut short at the end of a file, reached through an alias of
// an alias), or the honest code beside it that must say nothing.
func TestMutantEdges(t *testing.T) {
	cases := []struct {
		name, path, src string
		want            []want
	}{
		// Go: a /proc path built from pieces is read where the pieces meet.
		{"go /proc/self split across a concatenation", "a/a.go", "package a\nimport \"os\"\nfunc f() ([]byte, error) { return os.ReadFile(\"/proc/sel\" + \"f/cmdline\") }\n", []want{{3, ReadsRunContext}}},
		{"go a concatenation of honest paths", "a/a.go", "package a\nimport \"os\"\nfunc f() ([]byte, error) { return os.ReadFile(\"/etc/\" + \"hosts\") }\n", nil},

		// JavaScript: an alias of an alias of process, ended by a
		// semicolon, by a new line, or by the end of the file.
		{"js alias of an alias, semicolon", "a/a.js", "const p = process; const q = p; const a = q.argv;\n", []want{{1, ReadsRunContext}}},
		{"js alias of an alias, new line", "a/a.js", "const p = process\nconst q = p\nconst a = q.argv\n", []want{{3, ReadsRunContext}}},
		{"js alias of an alias at the end of the file", "a/a.js", "const p = process\nconst q = p", nil},
		{"js an alias of a member is not the object", "a/a.js", "const p = process.env;\nconst a = p.argv;\n", []want{{1, ReadsRunContext}}},
		{"js an alias continued on its line is not bound", "a/a.js", "const p = process\nconst q = p || {}\nconst a = q.argv\n", nil},
		// Destructuring: every name of the list, renamed or not.
		{"js argv destructured second and renamed", "a/a.js", "const {cwd, argv: a} = process;\nconsole.log(a);\n", []want{{1, ReadsRunContext}, {2, ReadsRunContext}}},
		{"js a variable named argv that holds cwd", "a/a.js", "const {cwd: argv} = process;\nconsole.log(argv);\n", nil},
		// A name after a dot is a member of something else, not the
		// global or the alias it is spelled like.
		{"js process optionally chained", "a/a.js", "const a = process?.argv;\n", []want{{1, ReadsRunContext}}},
		{"js a member named process", "a/a.js", "const a = cfg.process.argv;\nconst b = cfg?.process.argv;\n", nil},
		{"js a member named like an alias", "a/a.js", "const {env} = process;\nconst v = cfg.env\nfoo()\n", []want{{1, ReadsRunContext}}},
		// A variable's presence asked by its literal name is no read of
		// the environment; a test global's is; the global object's names
		// listed are.
		{"js an environment variable asked by name, first in the file", "a/a.js", "'CI' in process.env && run();\n", nil},
		{"js a test global asked by name, first in the file", "a/a.js", "'describe' in globalThis && run();\n", []want{{1, ReadsRunContext}}},
		{"js the global object's names listed", "a/a.js", "const names = Object.keys(globalThis);\n", []want{{1, ReadsRunContext}}},
		{"js the global object frozen", "a/a.js", "Object.freeze(globalThis);\n", nil},
		// A binding of a framework's member written again is the
		// file's own name, not a patch of the module.
		{"js a destructured assertion rebound", "a/a.js", "let {ok} = require('assert');\nok = myOk;\n", nil},
		{"js a destructured assertion patched", "a/a.js", "let {strict} = require('assert');\nstrict.equal = myEqual;\n", []want{{2, PatchesTestFramework}}},
		// A framework's module patched by the file's first statement.
		{"js delete first in the file", "a/a.js", "delete require('assert').equal;\n", []want{{1, PatchesTestFramework}}},
		{"js Object.assign first in the file", "a/a.js", "Object.assign(require('assert'), { ok() {} });\n", []want{{1, PatchesTestFramework}}},
		{"js Object.assign of another module", "a/a.js", "Object.assign(require('lodash'), { ok() {} });\n", nil},
		{"js Reflect.set on a framework's module", "a/a.js", "const ok = 1;\nReflect.set(require('assert'), 'ok', () => {});\n", []want{{2, PatchesTestFramework}}},
		{"js another object's assign", "a/a.js", "const _ = lib;\n_.assign(require('assert'), {});\n", nil},
		// Python: an import read wherever a statement starts: on a later
		// line, after a semicolon.
		{"py import on the second line", "a/a.py", "x = 1\nimport sys\nA = sys.argv\n", []want{{3, ReadsRunContext}}},
		{"py import after a semicolon", "a/a.py", "x = 1; import sys as s\nA = s.argv\n", []want{{2, ReadsRunContext}}},
		{"py a name that is not imported", "a/a.py", "sys = Config()\nA = sys.argv\n", nil},
		{"py modules imported in a list", "a/a.py", "import os, sys\nA = sys.argv\n", []want{{2, ReadsRunContext}}},
		{"py a renamed module then another", "a/a.py", "import os.path as p, sys\nA = sys.argv\n", []want{{2, ReadsRunContext}}},
		{"py imports on consecutive lines", "a/a.py", "import os\nimport sys\nA = sys.argv\n", []want{{3, ReadsRunContext}}},
		{"py a rename cut short keeps the module's name", "a/a.py", "import sys as\nA = sys.argv\n", []want{{2, ReadsRunContext}}},
		{"py import cut short", "a/a.py", "import sys as", nil},
		{"py a module imported whole and from", "a/a.py", "import sys\nfrom sys import path\nA = sys.argv\n", []want{{3, ReadsRunContext}}},
		{"py an import after a from-import", "a/a.py", "from os import path\nimport sys\nA = sys.argv\n", []want{{3, ReadsRunContext}}},
		{"py an attribute named like an import", "a/a.py", "import sys\nA = cfg.sys.argv\n", nil},
		// Python: a framework's module used, or its name bound again, is
		// no patch; an attribute written is.
		{"py a framework run, not patched", "a/a.py", "import unittest\nunittest.main()\n", nil},
		{"py a framework's name bound again", "a/a.py", "import unittest\nunittest = None\n", nil},
		{"py a framework's attribute written", "a/a.py", "import unittest\nunittest.TestCase.run = None\n", []want{{2, PatchesTestFramework}}},
		{"py a framework's attribute written in a tuple", "a/a.py", "import unittest\nx, unittest.TestCase.run = 1, None\n", []want{{2, PatchesTestFramework}}},
		{"py a framework's attribute written in parentheses", "a/a.py", "import unittest\n(unittest.TestCase.run, x) = None, 1\n", []want{{2, PatchesTestFramework}}},
		{"py a framework's attribute read into a tuple", "a/a.py", "import unittest\nx, y = 1, unittest.TestCase.run\n", nil},
		{"py a framework's attribute deleted", "a/a.py", "import unittest\ndel unittest.TestCase.run\n", []want{{2, PatchesTestFramework}}},
		{"py a framework's name deleted", "a/a.py", "import unittest\ndel unittest\n", nil},
		{"py a framework's attribute removed by delattr", "a/a.py", "import unittest\ndelattr(unittest.TestCase, 'run')\n", []want{{2, PatchesTestFramework}}},
		{"py a framework's attribute read by getattr", "a/a.py", "import unittest\ngetattr(unittest.TestCase, 'run')\n", nil},
		// Files cut short: nothing bound, no panic.
		// A key never closed is not read as a literal one: told, no panic.
		{"py getenv cut short", "a/a.py", "import os\nx = os.getenv('HOME'", []want{{2, ReadsRunContext}}},
		{"py environ index cut short", "a/a.py", "import os\nx = os.environ['HOME'", []want{{2, ReadsRunContext}}},
		// Python: a variable's presence asked by its literal name.
		{"py presence asked first on its line", "a/a.py", "import os\n'CI' in os.environ and run()\n", nil},
		{"py absence asked", "a/a.py", "import os\nx = 'CI' not in os.environ\n", nil},
		{"py absence asked first on its line", "a/a.py", "import os\n'CI' not in os.environ or run()\n", nil},
		{"py a computed name's absence", "a/a.py", "import os\nx = name not in os.environ\n", []want{{2, ReadsRunContext}}},
		{"py a computed name's presence", "a/a.py", "import os\nx = name in os.environ\n", []want{{2, ReadsRunContext}}},
		{"js a chain cut short after its dot", "a/a.js", "const a = process.", nil},
		{"js a chain cut short in its index", "a/a.js", "const a = process['argv'", nil},
		{"js destructuring rename cut short", "a/a.js", "const {cwd: } = process;\n", nil},
		{"js require cut short", "a/a.js", "const a = require('assert'", nil},
		{"js destructuring cut short", "a/a.js", "a = process; let { argv", nil},
		{"js assignment cut short", "a/a.js", "const a =", nil},
		{"js import cut short", "a/a.js", "import assert", nil},
		{"js import without its module", "a/a.js", "import assert from", nil},
		{"js named import without its closing brace", "a/a.js", "import { strict from 'assert';\nstrict.equal = () => {};\n", []want{{2, PatchesTestFramework}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.path, c.src, c.want) })
	}
}

// An import clause is read up to stmtReach tokens after `import`: a
// framework's binding named within that reach is a framework's, one past
// it is not looked for (a file of one endless statement stays linear).
func TestMutantJSImportReach(t *testing.T) {
	clause := func(n int, comma string) string {
		var b strings.Builder
		b.WriteString("import { strict")
		for i := 1; i < n; i++ {
			b.WriteString(", a")
			b.WriteString(strings.Repeat("x", i))
		}
		b.WriteString(comma + " } from 'assert';\nstrict.equal = () => {};\n")
		return b.String()
	}
	// n names: 2n+1 tokens between import and from, 2n+2 with a
	// trailing comma; from is found at most stmtReach tokens on.
	check(t, "a/a.js", clause(31, ""), []want{{2, PatchesTestFramework}})
	check(t, "a/a.js", clause(31, ","), nil)
}

// Only a read of the run's context is refused in a library alone; asking
// whether it runs under a test, printing a runner's framing, exiting early
// and patching a framework are refused anywhere.
func TestMutantLibraryOnly(t *testing.T) {
	if !LibraryOnly(ReadsRunContext) {
		t.Error("a read of the run's context is not library-only")
	}
	for _, k := range []Kind{AsksIfUnderTest, PrintsRunnerFraming, ExitsEarly, PatchesTestFramework, Unreadable} {
		if LibraryOnly(k) {
			t.Errorf("%s is library-only", k)
		}
	}
}

// The global object's names listed through Object's and Reflect's
// functions, at the start of a file and after a declaration.
func TestMutantJSReflect(t *testing.T) {
	check(t, "a/a.js", "Object.keys(globalThis).forEach(f);\n", []want{{1, ReadsRunContext}})
	check(t, "a/a.js", "const n = Reflect.ownKeys(globalThis);\n", []want{{1, ReadsRunContext}})
	check(t, "a/a.js", "const n = Object.is(globalThis, x);\n", nil)
	// A member named by a string index is the member.
	check(t, "a/a.js", "const a = process['argv'];\n", []want{{1, ReadsRunContext}})
	check(t, "a/a.js", "const a = process['title'];\n", nil)
}
