package mutate

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func allLines(src []byte) []int {
	var l []int
	for i := 1; i <= strings.Count(string(src), "\n")+1; i++ {
		l = append(l, i)
	}
	return l
}

// Every line of real Go files mutated: every mutant parses, and each
// operator is used.
func TestRealGoMutantsParse(t *testing.T) {
	ops := map[Op]int{}
	total := 0
	for _, path := range []string{"golang.go", "tokens.go", "mutate.go", "../srctok/js.go", "../tells/golang.go"} {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := MutantsMax(path, src, allLines(src), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			ops[m.Op]++
			if _, err := parser.ParseFile(token.NewFileSet(), "", m.Source, 0); err != nil {
				t.Fatalf("mutant %s does not parse: %v", m, err)
			}
		}
		total += len(ms)
	}
	if len(ops) != 6 {
		t.Fatalf("operators used: %v", ops)
	}
	t.Logf("%d Go mutants, all parse: %v", total, ops)
}

// Every line of a Python and a JavaScript file mutated: every mutant is
// still valid Python (python3's ast.parse) and JavaScript (node's
// vm.Script), read in one process each.
func TestRealPythonJSMutantsParse(t *testing.T) {
	for _, c := range []struct{ file, prog, script string }{
		{"testdata/inventory.py", "python3", "import ast, sys\nfor p in sys.argv[1:]:\n    ast.parse(open(p).read(), p)\n"},
		{"testdata/inventory.js", "node", "const vm = require('vm'), fs = require('fs');\nfor (const p of process.argv.slice(2)) new vm.Script(fs.readFileSync(p, 'utf8'), { filename: p });\n"},
	} {
		prog, err := exec.LookPath(c.prog)
		if err != nil {
			t.Skipf("%s is not installed: mutants of %s not checked", c.prog, c.file)
		}
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := MutantsMax(c.file, src, allLines(src), 0)
		if err != nil {
			t.Fatal(err)
		}
		ops := map[Op]int{}
		dir := t.TempDir()
		args := []string{"-c", c.script}
		if c.prog == "node" {
			args = []string{"-e", c.script, "--"}
		}
		for i, m := range ms {
			ops[m.Op]++
			p := filepath.Join(dir, strconv.Itoa(i)+filepath.Ext(c.file))
			if err := os.WriteFile(p, m.Source, 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, p)
		}
		if len(ops) != 6 {
			t.Fatalf("%s: operators used: %v", c.file, ops)
		}
		if out, err := exec.Command(prog, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: a mutant does not parse: %v\n%s", c.file, err, out)
		}
		t.Logf("%s: %d mutants, all parse: %v", c.file, len(ms), ops)
	}
}
