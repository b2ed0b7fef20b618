package tells

import "testing"

// The attacks of issue 45: ordinary code that reads the run's context, and
// the honest code beside it.
func TestScanContextGo(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"suffix in a variable", "package calc\nimport (\"os\"; \"strings\")\nvar suffix = \".test\"\nfunc under() bool { return strings.HasSuffix(os.Args[0], suffix) }\n",
			[]want{{4, AsksIfUnderTest}, {4, ReadsRunContext}}},
		{"proc self cmdline", "package calc\nimport \"os\"\nfunc under() bool { b, _ := os.ReadFile(\"/proc/self/\" + \"cmdline\"); return len(b) > 0 }\n",
			[]want{{3, ReadsRunContext}}},
		{"proc by own pid", "package calc\nimport (\"fmt\"; \"os\")\nfunc p() string { return fmt.Sprintf(\"/proc/%d/cmdline\", os.Getpid()) }\n",
			[]want{{3, ReadsRunContext}}},
		{"a constant holding proc self", "package calc\nconst self = \"/proc/self\"\n", []want{{2, ReadsRunContext}}},
		{"os.Executable", "package calc\nimport \"os\"\nvar exe, _ = os.Executable()\n", []want{{3, ReadsRunContext}}},
		{"flag.Parse in a library", "package calc\nimport \"flag\"\nfunc f() []string { flag.Parse(); return flag.Args() }\n", []want{{3, ReadsRunContext}, {3, ReadsRunContext}}},
		{"testing.Short", "package calc\nimport \"testing\"\nfunc f() bool { return testing.Short() }\n", []want{{3, ReadsRunContext}}},
		{"runtime.Caller", "package calc\nimport \"runtime\"\nfunc f() string { _, file, _, _ := runtime.Caller(2); return file }\n", []want{{3, ReadsRunContext}}},
		{"linkname into testing", "package calc\nimport _ \"unsafe\"\n//go:linkname chatty testing.chatty\nvar chatty bool\n", []want{{3, ReadsRunContext}}},
		{"testing patched", "package calc\nimport \"testing\"\nfunc init() { testing.MainStart = nil }\n", []want{{3, PatchesTestFramework}, {3, ReadsRunContext}}},
		{"aliased os", "package calc\nimport sys \"os\"\nvar name = sys.Args[0]\n", []want{{3, ReadsRunContext}}},

		// honest: nothing.
		{"flag in main", "package main\nimport \"flag\"\nfunc main() { flag.Parse(); _ = flag.Args() }\n", nil},
		{"testing.TB helper", "package testutil\nimport \"testing\"\nfunc Must(tb testing.TB, err error) {\n\tif err != nil {\n\t\ttb.Fatal(err)\n\t}\n}\n", nil},
		{"another process's proc", "package calc\nimport \"strconv\"\nfunc p(pid int) string { return \"/proc/\" + strconv.Itoa(pid) + \"/status\" }\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "calc/calc.go", c.src, c.want) })
	}
}

// An exit reached from the package's initialisation through another file's
// function: told in both files, with the package given.
func TestScanGoInitExitAcrossFiles(t *testing.T) {
	initFile := "package calc\n\nfunc init() { setup() }\n"
	helper := "package calc\n\nimport xos \"os\"\n\nfunc setup() { finish(0) }\nfunc finish(c int) { xos.Exit(c) }\nfunc Fail() { xos.Exit(1) }\n"
	sib := func(name, src string) func() map[string][]byte {
		return func() map[string][]byte {
			return map[string][]byte{name: []byte(src), "calc_test.go": []byte("package calc\nfunc init() { Fail() }\n")}
		}
	}
	got := ScanIn("calc/a.go", []byte(initFile), Around{Siblings: sib("b.go", helper)})
	if len(got) != 1 || got[0].Kind != ExitsEarly || got[0].Line != 3 {
		t.Fatalf("init file: %v", got)
	}
	got = ScanIn("calc/b.go", []byte(helper), Around{Siblings: sib("a.go", initFile)})
	if len(got) != 1 || got[0].Kind != ExitsEarly || got[0].Line != 6 {
		t.Fatalf("helper file (Fail is reached only from a test file): %v", got)
	}
	// Alone, neither file tells.
	if got := Scan("calc/b.go", []byte(helper)); len(got) != 0 {
		t.Fatalf("helper alone: %v", got)
	}
	// Another package in the folder does not count.
	other := func() map[string][]byte {
		return map[string][]byte{"a.go": []byte("package other\nfunc init() { setup() }\n")}
	}
	if got := ScanIn("calc/b.go", []byte(helper), Around{Siblings: other}); len(got) != 0 {
		t.Fatalf("another package's init: %v", got)
	}
}

func TestScanContextPython(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"sys.modules two-liner", "import sys\n_loaded = sys.modules\nUNDER = \"unittest\" in _loaded\n", []want{{2, ReadsRunContext}}},
		{"from sys import modules", "from sys import modules as m\ndef f():\n    return len(m)\n", []want{{3, ReadsRunContext}}},
		{"import sys as s", "import sys as s\nARGS = s.argv\n", []want{{2, ReadsRunContext}}},
		{"inspect.stack", "import inspect\ndef f():\n    return inspect.stack()[1]\n", []want{{3, ReadsRunContext}}},
		{"sys._getframe", "import sys\ndef f():\n    return sys._getframe(1).f_code\n", []want{{3, ReadsRunContext}}},
		{"environ by a computed key", "import os\nK = 'PYTEST' + '_CURRENT_TEST'\nV = os.environ.get(K)\nW = os.getenv(K)\n", []want{{3, ReadsRunContext}, {4, ReadsRunContext}}},
		{"environ iterated", "from os import environ\nNAMES = [k for k in environ]\n", []want{{2, ReadsRunContext}}},
		{"__main__", "import __main__\nF = __main__.__file__\n", []want{{2, ReadsRunContext}}},
		{"unittest.case alias patch", "import unittest.case as _c\n_c.TestCase.assertEqual = lambda *a, **k: None\n", []want{{2, PatchesTestFramework}}},
		{"from unittest import TestCase", "from unittest import TestCase as T\ndef p():\n    T.assertTrue = lambda *a: None\n", []want{{3, PatchesTestFramework}}},
		{"setattr through alias", "import pytest as pt\nsetattr(pt, 'approx', lambda *a: 1)\n", []want{{2, PatchesTestFramework}}},
		{"exit through an alias on import", "from sys import exit as bye\nbye(0)\n", []want{{2, ExitsEarly}}},

		{"literal env keys", "import os\nHOME = os.environ['HOME']\nX = os.environ.get('X', '1')\nY = os.getenv('Y')\nZ = 'Z' in os.environ\nos.environ['A'] = '1'\n", nil},
		{"argv under the main guard", "import sys\ndef main(a):\n    return 0\nif __name__ == '__main__':\n    sys.exit(main(sys.argv[1:]))\n", nil},
		{"a TestCase subclass", "import unittest\nclass T(unittest.TestCase):\n    x = 1\n", nil},
		{"a local named like a module", "def f(sys):\n    return sys.modules\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "pkg/calc.py", c.src, c.want) })
	}
}

func TestScanContextJS(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"env by a joined name", "const t = process.env[['NODE', 'TEST', 'CONTEXT'].join('_')];\n", []want{{1, ReadsRunContext}}},
		{"env spread", "const all = { ...process.env };\n", []want{{1, ReadsRunContext}}},
		{"env keys", "const names = Object.keys(process.env);\n", []want{{1, ReadsRunContext}}},
		{"env destructured from an alias", "const { env } = require('node:process');\nconst v = env[name];\n", []want{{1, ReadsRunContext}, {2, ReadsRunContext}}},
		{"argv", "export const args = process.argv.slice(2);\n", []want{{1, ReadsRunContext}}},
		{"require.main", "const main = require.main;\n", []want{{1, ReadsRunContext}}},
		{"globalThis lookup", "const t = globalThis['desc' + 'ribe'];\nconst u = typeof globalThis.expect;\nconst v = 'it' in globalThis;\n", []want{{1, ReadsRunContext}, {2, ReadsRunContext}, {3, ReadsRunContext}}},
		{"node:assert patched", "require('node:assert').strictEqual = () => {};\n", []want{{1, PatchesTestFramework}}},
		{"assert alias patched", "const a = require('assert');\na.equal = () => {};\n", []want{{2, PatchesTestFramework}}},
		{"import alias patched", "import * as assert from 'node:assert/strict';\nimport { expect as e } from 'chai';\nassert.deepEqual = () => {};\ne.to = 1;\nObject.assign(assert, { ok() {} });\n",
			[]want{{3, PatchesTestFramework}, {4, PatchesTestFramework}, {5, PatchesTestFramework}}},
		{"jest globals patched", "const { expect } = require('@jest/globals');\nexpect.extend = null;\n", []want{{2, PatchesTestFramework}}},

		{"literal env", "const port = process.env.PORT || process.env['HOST'];\nconst has = 'CI' in process.env;\n", nil},
		{"assert used", "const assert = require('node:assert');\nassert.strictEqual(a, b);\nconst ok = assert.ok;\n", nil},
		{"globalThis polyfill", "const g = typeof globalThis !== 'undefined' ? globalThis : window;\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "src/calc.js", c.src, c.want) })
	}
}
