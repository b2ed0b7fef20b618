package tells

import (
	"strings"
	"testing"
	"time"
)

type want struct {
	line int
	kind Kind
}

func kinds(ts []Tell) []want {
	var w []want
	for _, t := range ts {
		w = append(w, want{t.Line, t.Kind})
	}
	return w
}

func check(t *testing.T, path, src string, exp []want) {
	t.Helper()
	got := Scan(path, []byte(src))
	if len(got) != len(exp) {
		t.Fatalf("%s: got %v, want %v", path, got, exp)
	}
	for i := range exp {
		if got[i].Line != exp[i].line || got[i].Kind != exp[i].kind {
			t.Fatalf("%s: tell %d = %v, want line %d %s (all: %v)", path, i, got[i], exp[i].line, exp[i].kind, got)
		}
		if got[i].Column < 1 || got[i].What == "" || strings.ContainsAny(got[i].What, "\x16\n\r\x1b") {
			t.Fatalf("%s: tell %v: bad column or unescaped excerpt", path, got[i])
		}
	}
}

// The attack of issue 35: a non-test file whose init() asks testing.Testing,
// prints a passing go test -json run with test2json's \x16 framing and exits.
const goInitForger = `package calc

import (
	"fmt"
	"os"
	t "testing"
)

func init() {
	if !t.Testing() {
		return
	}
	for _, n := range []string{"TestAdd", "TestMul"} {
		fmt.Printf("\x16=== RUN   %s\n", n)
		fmt.Printf("\x16--- PASS: %s (0.00s)\n", n)
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}

func Add(a, b int) int { return a - b }
`

func TestScanGo(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"init forger", goInitForger, []want{{10, AsksIfUnderTest}, {14, PrintsRunnerFraming}, {15, PrintsRunnerFraming}, {17, PrintsRunnerFraming}, {18, ExitsEarly}}},
		{"Add right only under test", "package calc\nimport \"testing\"\nfunc Add(a, b int) int {\n\tif testing.Testing() {\n\t\treturn a + b\n\t}\n\treturn a - b\n}\n",
			[]want{{4, AsksIfUnderTest}}},
		{"testing.Testing as a value", "package p\nimport \"testing\"\nvar under = testing.Testing\n", []want{{3, AsksIfUnderTest}}},
		{"dot import", "package p\nimport . \"testing\"\nfunc f() bool { return Testing() }\n", []want{{3, AsksIfUnderTest}}},
		{"flag.Lookup test.v", "package p\nimport \"flag\"\nfunc f() bool { return flag.Lookup(\"test.v\") != nil }\n", []want{{3, AsksIfUnderTest}}},
		{"flag.CommandLine.Lookup test.run", "package p\nimport \"flag\"\nfunc f() bool { return flag.CommandLine.Lookup(\"test.\" + \"run\") != nil }\n",
			[]want{{3, AsksIfUnderTest}}},
		{"os.Args scanned for -test.", "package p\nimport (\"os\"; \"strings\")\nfunc f() bool {\n\tfor _, a := range os.Args {\n\t\tif strings.HasPrefix(a, \"-test.\") {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n",
			[]want{{4, ReadsRunContext}, {5, AsksIfUnderTest}}},
		{"binary name ends in .test", "package p\nimport (\"os\"; \"strings\")\nvar t = strings.HasSuffix(os.Args[0], \".test\")\n", []want{{3, AsksIfUnderTest}, {3, ReadsRunContext}}},
		{"framing split in constants", "package p\nimport \"fmt\"\nfunc f() { fmt.Println(\"--- \" + \"PASS: TestX\") }\n", []want{{3, PrintsRunnerFraming}}},
		{"test2json event", "package p\nconst ev = `{\"Action\":\"pass\",\"Test\":\"TestX\"}`\n", []want{{2, PrintsRunnerFraming}}},
		{"rune 0x16", "package p\nvar b = []byte{'\\x16', '='}\n", []want{{2, PrintsRunnerFraming}}},
		{"PASS then ok", "package p\nvar s = \"PASS\\nok  \\tcalc\\t0.01s\"\n", []want{{2, PrintsRunnerFraming}}},
		{"exit in var initializer", "package p\nimport \"os\"\nvar _ = func() int { os.Exit(0); return 0 }()\n", []want{{3, ExitsEarly}}},
		{"syscall.Exit in init", "package p\nimport \"syscall\"\nfunc init() { syscall.Exit(0) }\n", []want{{3, ExitsEarly}}},
		{"init exits through helpers", "package p\nimport \"os\"\nfunc init() { setup() }\nfunc setup() { finish(0) }\nfunc finish(c int) { os.Exit(c) }\n", []want{{3, ExitsEarly}, {5, ExitsEarly}}},
		{"renamed os", "package p\nimport xos \"os\"\nfunc init() { xos.Exit(0) }\n", []want{{3, ExitsEarly}}},
		{"unparsable", "package p\nfunc (\n", []want{{2, Unreadable}}},

		// honest code: no tell.
		{"own -testdata flag", "package main\nimport (\"flag\"; \"os\")\nvar td = flag.String(\"testdata\", \"\", \"folder\")\nfunc main() {\n\tflag.Parse()\n\tif len(os.Args) > 1 && os.Args[1] == \"-testdata\" {\n\t\tos.Exit(2)\n\t}\n}\n", []want{{6, ReadsRunContext}, {6, ReadsRunContext}}},
		{"PASS not printed", "package p\ntype Verdict string\nconst (\n\tPass Verdict = \"PASS\"\n\tFail Verdict = \"FAIL\"\n)\n", nil},
		{"exit in main", "package main\nimport \"os\"\nfunc main() { os.Exit(run()) }\nfunc run() int { return 0 }\n", nil},
		{"a file named test.txt", "package p\nimport \"os\"\nfunc f() ([]byte, error) { return os.ReadFile(\"test.txt\") }\nvar n = len(os.Args)\n", []want{{4, ReadsRunContext}}},
		{"flag.Lookup of its own flag", "package p\nimport \"flag\"\nvar v = flag.Lookup(\"verbose\")\n", []want{{3, ReadsRunContext}}},
		{"testing.T helper", "package testutil\nimport \"testing\"\nfunc Must(t *testing.T, err error) {\n\tt.Helper()\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n", nil},
		{"a local Testing", "package p\nfunc Testing() bool { return false }\nvar x = Testing()\n", nil},
		{"slices.Contains os.Args", "package p\nimport (\"os\"; \"slices\")\nvar under = slices.Contains(os.Args[1:], \"-test.v=true\")\n", []want{{3, ReadsRunContext}, {3, AsksIfUnderTest}}},
		{"compared with a test flag", "package p\nfunc f(a string) bool { return a == \"-test.paniconexit0\" }\n", []want{{2, AsksIfUnderTest}}},
		{"framing in a variable, printed", "package p\nimport \"fmt\"\nvar pass = \"--- PASS: %s (0.00s)\\n\"\nfunc f() { fmt.Printf(pass, \"TestX\") }\n", []want{{3, PrintsRunnerFraming}}},
		{"a reader of go test output", "package p\nimport (\"bytes\"; \"strings\")\nfunc f(line string, b []byte) int {\n\tif strings.HasPrefix(line, \"--- PASS: \") || bytes.HasPrefix(b, []byte(\"=== RUN\")) || line[0] == '\\x16' {\n\t\treturn 1\n\t}\n\tswitch line {\n\tcase \"PASS\\nok\":\n\t\treturn 2\n\t}\n\treturn 0\n}\n", nil},
		{"a runner of test binaries", "package p\nimport \"os/exec\"\nfunc run(bin string) *exec.Cmd { return exec.Command(bin, \"-test.run\", \"^TestX$\", \"-test.v\") }\nfunc has(f []string, s ...string) bool { return false }\nvar _ = has(nil, \"-v\", \"-test.v\")\n", nil},
		{"another process's name", "package p\nimport (\"os\"; \"strings\")\nvar self = os.Args[0]\nfunc isTestProc(args []string) bool { return strings.HasSuffix(args[0], \".test\") }\n", []want{{3, ReadsRunContext}}},
		{"comment", "package p\n// testing.Testing() and \"--- PASS\" in a comment\nfunc f() {}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "x/calc.go", c.src, c.want) })
	}
}

func TestScanPython(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"PYTEST_CURRENT_TEST", "import os\n\ndef add(a, b):\n    if os.environ.get('PYTEST_CURRENT_TEST'):\n        return a + b\n    return a - b\n", []want{{4, AsksIfUnderTest}}},
		{"pytest in sys.modules", "import sys\nUNDER = 'pytest' in sys.modules or \"unittest\" in sys.modules\n", []want{{2, AsksIfUnderTest}, {2, AsksIfUnderTest}}},
		{"env scanned by prefix", "import os\nT = any(k.startswith('PYTEST_') for k in os.environ)\n", []want{{2, AsksIfUnderTest}}},
		{"sys.argv", "import sys\nif sys.argv[0].endswith('pytest'):\n    pass\n", []want{{2, AsksIfUnderTest}}},
		{"prints pytest framing", "print('tests/test_calc.py::test_add PASSED')\nprint(f'{1} passed in 0.01s')\n", []want{{1, PrintsRunnerFraming}, {2, PrintsRunnerFraming}}},
		{"prints unittest framing", "import sys\nsys.stderr.write('.\\n----\\nRan 3 tests in 0.001s\\n\\nOK\\n')\n", []want{{2, PrintsRunnerFraming}}},
		{"os._exit", "import os\ndef f():\n    os._exit(0)\n", []want{{3, ExitsEarly}}},
		{"sys.exit on import", "import sys\nprint('ok')\nsys.exit(0)\n", []want{{3, ExitsEarly}}},
		{"assertEqual patched", "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n", []want{{2, PatchesTestFramework}}},
		{"setattr patch", "import unittest\nsetattr(unittest.TestCase, 'assertEqual', lambda *a: None)\n", []want{{2, PatchesTestFramework}}},
		{"unterminated", "x = 'abc\n", []want{{1, Unreadable}}},

		{"honest main guard", "import sys\n\ndef main():\n    print('OK')\n    return 0\n\nif __name__ == '__main__':\n    sys.exit(main())\n", nil},
		{"one-line main guard", "import sys\nif __name__ == '__main__': sys.exit(0)\n", nil},
		{"strings and comments", "# PYTEST_CURRENT_TEST os._exit(0)\nDOC = '''sys.exit(1) PYTEST'''\nSTATUS = 'PASSED'\n", nil},
		{"pytest as a dependency name", "REQUIRES = ['pytest>=7']\nimport os\nHOME = os.environ['HOME']\n", nil},
		{"sys.exit inside a function", "import sys\ndef fail():\n    sys.exit(1)\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "pkg/calc.py", c.src, c.want) })
	}
}

func TestScanJS(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"JEST_WORKER_ID", "function add(a, b) {\n  if (process.env.JEST_WORKER_ID) return a + b;\n  return a - b;\n}\n", []want{{2, AsksIfUnderTest}}},
		{"bracket env", "const under = process.env['NODE_TEST_CONTEXT'] !== undefined;\n", []want{{1, AsksIfUnderTest}}},
		{"env scanned by prefix", "const t = Object.keys(process.env).some((k) => k.startsWith('JEST_'));\n", []want{{1, AsksIfUnderTest}}},
		{"VITEST", "export const t = !!process.env.VITEST;\n", []want{{1, AsksIfUnderTest}}},
		{"NODE_ENV test", "if (process.env.NODE_ENV === 'test') {\n  module.exports = () => 4;\n}\n", []want{{1, AsksIfUnderTest}}},
		{"typeof jest", "const t = typeof jest !== 'undefined';\n", []want{{1, AsksIfUnderTest}}},
		{"argv", "const t = process.argv.some(a => a.includes('vitest'));\n", []want{{1, AsksIfUnderTest}}},
		{"TAP", "for (let i = 1; i <= 3; i++) console.log(`ok ${i} - add`);\nconsole.log('# pass 3');\nprocess.stdout.write('TAP version 13\\n1..3\\n');\n",
			[]want{{1, PrintsRunnerFraming}, {2, PrintsRunnerFraming}, {3, PrintsRunnerFraming}}},
		{"top-level exit", "console.log('hi');\nprocess.exit(0);\n", []want{{2, ExitsEarly}}},
		{"kill self on import", "console.log('ok 1');\nprocess.kill(process.pid, 'SIGKILL');\n", []want{{1, PrintsRunnerFraming}, {2, ExitsEarly}}},
		{"unterminated template", "const s = `abc ${x}\n", []want{{1, Unreadable}}},

		{"signal re-raised in a handler", "function onSig(s) { unload(); process.kill(process.pid, s); }\n", nil},
		{"exit in an arrow body", "const fail = () => process.exit(1)\nconst ok = typeof process.reallyExit === 'function';\n", nil},
		{"NODE_ENV production", "if (process.env.NODE_ENV === 'production') { enableCache(); }\n", nil},
		{"exit in a function", "function fail(msg) {\n  console.error(msg);\n  process.exit(1);\n}\nmain().catch(() => process.exit(1));\n", nil},
		{"CLI entry point", "if (require.main === module) process.exit(main(process.argv.slice(2)));\n", []want{{1, ReadsRunContext}, {1, ReadsRunContext}}},
		{"strings, comments, regexps", "// process.exit(0) JEST_WORKER_ID\nconst re = /ok \\d+/;\nconst s = 'ok 1';\n/* console.log('ok 1') */\nconst x = a / b / c;\n", nil},
		{"an ok message", "console.log('ok, done');\nconsole.log('tests passed:', n);\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "src/calc.ts", c.src, c.want) })
	}
}

func TestPythonMainModule(t *testing.T) {
	src := []byte("import sys\nfrom .cli import main\nsys.exit(main())\n")
	if got := Scan("pkg/__main__.py", src); len(got) != 0 {
		t.Fatalf("__main__.py: %v", got)
	}
	got := Scan("pkg/cli.py", src)
	if len(got) != 1 || got[0].Kind != ExitsEarly || got[0].What != `"sys.exit(main())"` {
		t.Fatalf("cli.py: %v", got)
	}
}

func TestIsTestFile(t *testing.T) {
	for path, want := range map[string]bool{
		"calc_test.go": true, "a/b/calc_test.go": true, "calc.go": false, "testdata/x.go": false,
		"test_calc.py": true, "calc_test.py": true, "pkg/conftest.py": true, "tests/helpers.py": true, "calc.py": false, "contest.py": false,
		"src/calc.test.ts": true, "calc.spec.js": true, "src/__tests__/calc.js": true, "test/calc.js": true, "src/test/calc.js": false, "src/calc.js": false,
		"README.md": false, "test_calc.txt": false,
	} {
		if got := IsTestFile(path); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestUnknownLanguage(t *testing.T) {
	if got := Scan("notes.md", []byte("testing.Testing() --- PASS")); got != nil {
		t.Fatalf("got %v", got)
	}
}

// Hostile sizes stay linear: a chain of 40,000 sums (go/parser refuses deeper nesting: an unreadable tell), 100,000 comment
// lines, one endless JavaScript statement. A quadratic scan would take
// minutes here.
func TestScanLinear(t *testing.T) {
	var g strings.Builder
	g.WriteString("package p\nvar x string\nvar s = x")
	for i := 0; i < 40000; i++ {
		g.WriteString(` + "a"`)
	}
	g.WriteString("\n")
	var py strings.Builder
	for i := 0; i < 100000; i++ {
		py.WriteString("# a comment line\n")
	}
	py.WriteString("import os\nos._exit(0)\n")
	var js strings.Builder
	js.WriteString("const a = [")
	for i := 0; i < 100000; i++ {
		js.WriteString("process.env.NODE_ENV, ")
	}
	js.WriteString("];\n")
	start := time.Now()
	if got := Scan("p.go", []byte(g.String())); len(got) != 0 {
		t.Fatalf("go: %v", got[:1])
	}
	if got := Scan("p.py", []byte(py.String())); len(got) != 1 || got[0].Line != 100002 {
		t.Fatalf("python: %v", got)
	}
	if got := Scan("p.js", []byte(js.String())); len(got) != 0 {
		t.Fatalf("js: %v", got[:1])
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}
