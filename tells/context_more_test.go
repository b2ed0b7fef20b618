package tells

import "testing"

// More of the reads of the run's context and the exits reached from
// initialisation, one case per rule (each pins a condition of the scan).
func TestScanContextGoRules(t *testing.T) {
	cases := []struct {
		name, src string
		want      []want
	}{
		{"a method init reaches exits", "package a\nimport \"os\"\ntype T struct{}\nfunc (T) quit() { os.Exit(0) }\nvar t T\nfunc init() { t.quit() }\n", []want{{4, ExitsEarly}}},
		{"a method nothing reaches", "package a\nimport \"os\"\ntype T struct{}\nfunc (T) quit() { os.Exit(0) }\n", nil},
		{"a constant holding .test", "package a\nimport (\"os\"; \"strings\")\nconst suffix = \".test\"\nfunc under() bool { return strings.HasSuffix(os.Args[0], suffix) }\n",
			[]want{{4, AsksIfUnderTest}, {4, ReadsRunContext}}},
		{"os dot-imported", "package a\nimport . \"os\"\nvar a = Args\nvar e, _ = Executable()\nvar h = Getenv(\"HOME\")\n", []want{{3, ReadsRunContext}, {4, ReadsRunContext}}},
		{"testing dot-imported", "package a\nimport . \"testing\"\nvar s = Short()\nfunc h(t *T) {}\nvar _ = 1\n", []want{{3, ReadsRunContext}}},
		{"linkname os_args", "package a\nimport _ \"unsafe\"\n//go:linkname args runtime.os_args\nvar args []string\n", []want{{3, ReadsRunContext}}},
		{"linkname argslice", "package a\nimport _ \"unsafe\"\n//go:linkname args runtime.argslice\nvar args []string\n", []want{{3, ReadsRunContext}}},
		{"linkname runtime_args", "package a\nimport _ \"unsafe\"\n//go:linkname args runtime.runtime_args\nfunc args() []string\n", []want{{3, ReadsRunContext}}},
		{"linkname elsewhere in runtime", "package a\nimport _ \"unsafe\"\n//go:linkname nanotime runtime.nanotime\nfunc nanotime() int64\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, "a/a.go", c.src, c.want) })
	}
}

func TestScanAliasesAtTheStart(t *testing.T) {
	check(t, "a/a.js", "a = require('assert');\na.equal = 1;\n", []want{{2, PatchesTestFramework}})
	check(t, "a/a.js", "const m = module.require('assert')", nil)
	check(t, "a/a.js", "const m = module.require(\n", nil)
	check(t, "a/a.js", "const m = module.require(x);\nm.equal = 1;\n", nil)
}

func TestScanGoReadersAndDotExits(t *testing.T) {
	check(t, "a/a.go", "package a\nimport . \"os\"\nfunc init() { Exit(0) }\n", []want{{3, ExitsEarly}})
	check(t, "a/a.go", "package a\nimport . \"os\"\nvar p int\nfunc init() { p = Getpid() }\n", nil)
	check(t, "a/a.go", "package a\nfunc f(x string) bool { return x != \"--- PASS\" }\n", nil)
	check(t, "a/a.go", "package a\nfunc f(x string) bool { return x == \"--- PASS\" }\n", nil)
	check(t, "a/a.go", "package a\nvar c = '\\x16'\nvar d = 'a'\n", []want{{2, PrintsRunnerFraming}})
}
