package mutate

import (
	"bytes"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// lineOf returns line n (1-based) of src.
func lineOf(src []byte, n int) string {
	return strings.Split(string(src), "\n")[n-1]
}

type exp struct {
	op   Op
	desc string
	line string // the mutated line as it reads in the mutant
}

func run(t *testing.T, path, src string, lines []int, want []exp) []Mutant {
	t.Helper()
	ms, err := Mutants(path, []byte(src), lines)
	if err != nil {
		t.Fatal(err)
	}
	var got []exp
	for _, m := range ms {
		got = append(got, exp{m.Op, m.Description, lineOf(m.Source, m.Line)})
		if m.Path != path || m.Column < 1 {
			t.Fatalf("bad mutant %+v", m)
		}
		if path[len(path)-3:] == ".go" {
			if _, err := parser.ParseFile(token.NewFileSet(), "", m.Source, 0); err != nil {
				t.Fatalf("mutant %s does not parse: %v\n%s", m, err, m.Source)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", show(got), show(want))
	}
	return ms
}

func show(es []exp) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("  {" + string(e.op) + ", " + e.desc + ", " + e.line + "}\n")
	}
	return b.String()
}

const goSrc = `package calc

import "errors"

// Clamp keeps v within [lo, hi].
func Clamp(v, lo, hi int) (int, error) {
	if lo > hi {
		return 0, errors.New("lo > hi") // a comment: a < b && c
	}
	if !ok(v) || v < lo && v != 0 {
		v = lo
	}
	for i := 0; i < 3; i++ {
		v += 2
	}
	return v, nil
}

func ok(v int) bool { return v%2 == 0 }

func Name(p *T) (string, T, *T) {
	return "x", *p, p
}

type T struct{ A int }
`

func TestGoOperators(t *testing.T) {
	run(t, "calc/clamp.go", goSrc, []int{7}, []exp{
		{FlipComparison, "flip > to <=", "\tif lo <= hi {"},
	})
	// the string and the comment of line 8 are left alone; 0 is already a zero.
	run(t, "calc/clamp.go", goSrc, []int{8}, []exp{
		{ChangeConstant, "change 0 to 1", "\t\treturn 1, errors.New(\"lo > hi\") // a comment: a < b && c"},
		{ZeroReturn, `return nil instead of errors.New("lo > hi")`, "\t\treturn 0, nil // a comment: a < b && c"},
	})
	run(t, "calc/clamp.go", goSrc, []int{10}, []exp{
		{NegateCondition, "negate the condition !ok(v) || v < lo && v != 0", "\tif !(!ok(v) || v < lo && v != 0) {"},
		{SwapLogical, "swap || for &&", "\tif !ok(v) && v < lo && v != 0 {"},
		{FlipComparison, "flip < to >=", "\tif !ok(v) || v >= lo && v != 0 {"},
		{SwapLogical, "swap && for ||", "\tif !ok(v) || v < lo || v != 0 {"},
		{FlipComparison, "flip != to ==", "\tif !ok(v) || v < lo && v == 0 {"},
		{ChangeConstant, "change 0 to 1", "\tif !ok(v) || v < lo && v != 1 {"},
	})
	run(t, "calc/clamp.go", goSrc, []int{11}, []exp{{RemoveStatement, "remove v = lo", "\t\t"}})
	run(t, "calc/clamp.go", goSrc, []int{13}, []exp{
		{ChangeConstant, "change 0 to 1", "\tfor i := 1; i < 3; i++ {"},
		{FlipComparison, "flip < to >=", "\tfor i := 0; i >= 3; i++ {"},
		{ChangeConstant, "change 3 to 4", "\tfor i := 0; i < 4; i++ {"},
	})
	run(t, "calc/clamp.go", goSrc, []int{16}, []exp{{ZeroReturn, "return 0 instead of v", "\treturn 0, nil"}})
	run(t, "calc/clamp.go", goSrc, []int{19}, []exp{
		{ZeroReturn, "return false instead of v%2 == 0", "func ok(v int) bool { return false }"},
		{ChangeConstant, "change 2 to 3", "func ok(v int) bool { return v%3 == 0 }"},
		{FlipComparison, "flip == to !=", "func ok(v int) bool { return v%2 != 0 }"},
		{ChangeConstant, "change 0 to 1", "func ok(v int) bool { return v%2 == 1 }"},
	})
	run(t, "calc/clamp.go", goSrc, []int{22}, []exp{
		{ZeroReturn, `return "" instead of "x"`, `	return "", *p, p`},
		{ZeroReturn, "return *new(T) instead of *p", `	return "x", *new(T), p`},
		{ZeroReturn, "return nil instead of p", `	return "x", *p, nil`},
	})
}

func TestGoEquivalentSkipped(t *testing.T) {
	src := "package p\n\nfunc f(a, b bool) bool {\n\tif a && a {\n\t\treturn false\n\t}\n\treturn a\n}\n\nfunc g() (error, Celsius, *int) {\n\treturn nil, 0, nil\n}\n"
	// a && a swapped is the same; false returned as false is the same; nil
	// and 0 returned as an interface and a named number type are their zeros.
	run(t, "p.go", src, []int{4, 5, 11}, []exp{
		{NegateCondition, "negate the condition a && a", "\tif !(a && a) {"},
		{ChangeConstant, "change 0 to 1", "\treturn nil, 1, nil"},
	})
}

func TestGoFuncLitResults(t *testing.T) {
	src := "package p\n\nfunc f() string {\n\tg := func() int {\n\t\treturn 7\n\t}\n\t_ = g\n\treturn \"s\"\n}\n"
	run(t, "p.go", src, []int{5}, []exp{
		{ZeroReturn, "return 0 instead of 7", "\t\treturn 0"},
		{ChangeConstant, "change 7 to 8", "\t\treturn 8"},
	})
}

func TestOnlyGivenLines(t *testing.T) {
	for _, c := range []struct{ path, src string }{{"calc.go", goSrc}, {"calc.py", pySrc}, {"calc.ts", jsSrc}} {
		n := strings.Count(c.src, "\n")
		for l := 1; l <= n; l++ {
			ms, err := Mutants(c.path, []byte(c.src), []int{l})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.Line != l {
					t.Fatalf("%s: asked for line %d, got %s", c.path, l, m)
				}
				// every byte before line l and after it is unchanged.
				src := []byte(c.src)
				pre := 0
				for pre < len(src) && pre < len(m.Source) && src[pre] == m.Source[pre] {
					pre++
				}
				first := bytes.Count(src[:pre], []byte("\n")) + 1
				if first != l || bytes.Equal(src, m.Source) {
					t.Fatalf("%s: mutant %s changes line %d (or nothing)", c.path, m, first)
				}
			}
		}
	}
}

const pySrc = `def clamp(v, lo, hi):
    if lo > hi and hi is not None:  # lo < hi
        raise ValueError("lo > hi")
    elif not ok(v):
        v = lo
    while v < 10:
        v += 2
    log("done < now")
    return v


def name():
    return "x"
`

func TestPythonOperators(t *testing.T) {
	run(t, "calc.py", pySrc, []int{2}, []exp{
		{NegateCondition, "negate the condition lo > hi and hi is not None", "    if not (lo > hi and hi is not None):  # lo < hi"},
		{FlipComparison, "flip > to <=", "    if lo <= hi and hi is not None:  # lo < hi"},
		{SwapLogical, "swap and for or", "    if lo > hi or hi is not None:  # lo < hi"},
		{FlipComparison, "flip is not to is", "    if lo > hi and hi is None:  # lo < hi"},
	})
	run(t, "calc.py", pySrc, []int{3}, nil) // raise: no operator; the string stays
	run(t, "calc.py", pySrc, []int{4}, []exp{{NegateCondition, "negate the condition not ok(v)", "    elif ok(v):"}})
	run(t, "calc.py", pySrc, []int{5}, []exp{{RemoveStatement, "remove v = lo", "        pass"}})
	run(t, "calc.py", pySrc, []int{6}, []exp{
		{FlipComparison, "flip < to >=", "    while v >= 10:"},
		{ChangeConstant, "change 10 to 11", "    while v < 11:"},
	})
	run(t, "calc.py", pySrc, []int{7}, []exp{
		{RemoveStatement, "remove v += 2", "        pass"},
		{ChangeConstant, "change 2 to 3", "        v += 3"},
	})
	run(t, "calc.py", pySrc, []int{8}, []exp{{RemoveStatement, `remove log("done < now")`, "    pass"}})
	run(t, "calc.py", pySrc, []int{9}, []exp{{ZeroReturn, "return None instead of v", "    return None"}})
	run(t, "calc.py", pySrc, []int{13}, []exp{{ZeroReturn, `return "" instead of "x"`, `    return ""`}})
}

const jsSrc = `export function clamp(v: number, lo: number, hi: number): Array<number> {
  if (lo > hi && hi !== null) { // lo < hi
    throw new Error('lo > hi');
  } else if (!ok(v)) {
    v = lo;
  }
  const re = /a<b/;
  while (v<10 || v === 3) v += 2;
  log(` + "`done ${v < 1}`" + `);
  return [v];
}
function name() {
  return true;
}
`

func TestJSOperators(t *testing.T) {
	run(t, "calc.ts", jsSrc, []int{1}, nil) // Array<number> is a type
	run(t, "calc.ts", jsSrc, []int{2}, []exp{
		{NegateCondition, "negate the condition lo > hi && hi !== null", "  if (!(lo > hi && hi !== null)) { // lo < hi"},
		{FlipComparison, "flip > to <=", "  if (lo <= hi && hi !== null) { // lo < hi"},
		{SwapLogical, "swap && for ||", "  if (lo > hi || hi !== null) { // lo < hi"},
		{FlipComparison, "flip !== to ===", "  if (lo > hi && hi === null) { // lo < hi"},
	})
	run(t, "calc.ts", jsSrc, []int{3}, nil)
	run(t, "calc.ts", jsSrc, []int{4}, []exp{{NegateCondition, "negate the condition !ok(v)", "  } else if (ok(v)) {"}})
	run(t, "calc.ts", jsSrc, []int{5}, []exp{{RemoveStatement, "remove v = lo;", "    "}})
	run(t, "calc.ts", jsSrc, []int{7}, nil) // a regular expression
	run(t, "calc.ts", jsSrc, []int{8}, []exp{
		{NegateCondition, "negate the condition v<10 || v === 3", "  while (!(v<10 || v === 3)) v += 2;"},
		{ChangeConstant, "change 10 to 11", "  while (v<11 || v === 3) v += 2;"},
		{SwapLogical, "swap || for &&", "  while (v<10 && v === 3) v += 2;"},
		{FlipComparison, "flip === to !==", "  while (v<10 || v !== 3) v += 2;"},
		{ChangeConstant, "change 3 to 4", "  while (v<10 || v === 4) v += 2;"},
		{ChangeConstant, "change 2 to 3", "  while (v<10 || v === 3) v += 3;"},
	})
	run(t, "calc.ts", jsSrc, []int{9}, []exp{{RemoveStatement, "remove log(`done ${v < 1}`);", "  "}})
	run(t, "calc.ts", jsSrc, []int{10}, []exp{{ZeroReturn, "return [] instead of [v]", "  return [];"}})
	run(t, "calc.ts", jsSrc, []int{13}, []exp{{ZeroReturn, "return false instead of true", "  return false;"}})
}

func TestCapDeterministicRoundRobin(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f(a, b, c int) bool {\n")
	for i := 0; i < 30; i++ {
		b.WriteString("\tif a < b && b < c || c < 7 {\n\t\ta++\n\t}\n")
	}
	b.WriteString("\treturn a > 1\n}\n")
	src := []byte(b.String())
	var lines []int
	for l := 1; l <= strings.Count(b.String(), "\n"); l++ {
		lines = append(lines, l)
	}
	ms, err := MutantsMax("p.go", src, lines, 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 40 {
		t.Fatalf("got %d mutants, want the cap of 40", len(ms))
	}
	perLine := map[int]int{}
	for _, m := range ms {
		perLine[m.Line]++
	}
	// 30 if-lines and 30 a++ lines and a return: each of the first 40 lines
	// in turn gets one before any gets a second.
	for l, n := range perLine {
		if n != 1 {
			t.Fatalf("line %d got %d mutants before every line had one", l, n)
		}
	}
	again, _ := MutantsMax("p.go", src, lines, 40)
	if !reflect.DeepEqual(ms, again) {
		t.Fatal("two calls gave different mutants")
	}
	all, _ := MutantsMax("p.go", src, lines, 0)
	if len(all) <= 40 {
		t.Fatalf("no cap gave %d", len(all))
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Mutants("a/b.go", []byte("package p\nfunc f() {\n\tif x {\n"), []int{3}); err == nil || !strings.HasPrefix(err.Error(), "a/b.go:") {
		t.Fatalf("got %v", err)
	}
	if _, err := Mutants("a.py", []byte("x = 1\ny = 'abc\n"), []int{1}); err == nil || err.Error() != "a.py:2:5: unterminated string" {
		t.Fatalf("got %v", err)
	}
	if ms, err := Mutants("a.rs", []byte("fn main() { 1 < 2 }"), []int{1}); ms != nil || err != nil {
		t.Fatalf("other language: %v %v", ms, err)
	}
	if ms, err := Mutants("a.go", []byte(goSrc), nil); ms != nil || err != nil {
		t.Fatalf("no lines: %v %v", ms, err)
	}
	if ms, err := Mutants("a.go", []byte(goSrc), []int{-3, 0, 10000}); len(ms) != 0 || err != nil {
		t.Fatalf("lines out of the file: %v %v", ms, err)
	}
}

func TestDescriptionEscapes(t *testing.T) {
	src := "package p\n\nfunc f() string {\n\treturn \"\\x16ok\" + \"\x16\u2028\"\n}\n"
	ms, err := Mutants("p.go", []byte(src), []int{4})
	if err != nil || len(ms) != 1 {
		t.Fatalf("%v %v", ms, err)
	}
	// the raw \x16 byte is escaped; U+2028 is white space, made a space.
	if want := `return "" instead of "\x16ok" + "\x16 "`; ms[0].Description != want {
		t.Fatalf("got %s, want %s", ms[0].Description, want)
	}
}

// A replacement never joins the word before or after it.
func TestWordsKeptApart(t *testing.T) {
	run(t, "p.go", "package p\n\nfunc f() (bool, int) {\n\treturn!g(),0\n}\n", []int{4}, []exp{
		{ZeroReturn, "return false instead of !g()", "\treturn false,0"},
		{ChangeConstant, "change 0 to 1", "\treturn!g(),1"},
	})
	run(t, "p.py", "def f():\n    return(1)\n", []int{2}, []exp{
		{ZeroReturn, "return None instead of (1)", "    return None"},
		{ChangeConstant, "change 1 to 2", "    return(2)"},
	})
}
