package srctok

import (
	"strings"
	"testing"
)

func texts(toks []Token) string {
	var s []string
	for _, t := range toks {
		switch t.Kind {
		case String:
			s = append(s, "S("+t.Value+")")
		case Newline:
			s = append(s, "NL")
		default:
			s = append(s, t.Text)
		}
	}
	return strings.Join(s, " ")
}

func TestPython(t *testing.T) {
	src := "x = rb'a\\x16' + f\"{y!r:>{w}} {{z}}\"  # c < d\n" +
		"s = '''one\n'two'\n''' ; t = (1,\n 2) \\\n + 0x1F\n" +
		"if a:\n    b = u'\\026'\n"
	toks, err := Python([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `x = S(a\x16) + S(1 {z}) NL s = S(one
'two'
) ; t = ( 1 , 2 ) + 0x1F NL if a : NL b = S(` + "\x16" + `) NL`
	if got := texts(toks); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// positions, indentation and line starts
	last := toks[len(toks)-2] // the string on the last line
	if last.Line != 8 || last.Col != 9 || last.Indent != 4 || toks[len(toks)-4].Text != "b" || !toks[len(toks)-4].LineStart {
		t.Fatalf("bad position %+v", last)
	}
	if _, err := Python([]byte("a = 1\nb = \"x\n")); err == nil || err.Error() != "2:5: unterminated string" {
		t.Fatalf("got %v", err)
	}
	if _, err := Python([]byte("a = '''x\n")); err == nil {
		t.Fatal("unterminated triple quote not seen")
	}
}

func TestJS(t *testing.T) {
	src := "#!/usr/bin/env node\nconst a = b / c / d; // e < f\nconst r = /[/]x\\//g.test(s);\n" +
		"const t = `ok ${ {a: '}'}.a + `${1}` } end`; /* x\ny */ return /re/;\n"
	toks, err := JS([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "const a = b / c / d ; const r = S() . test ( s ) ; const t = S(ok 1 end) ; return S() ;"
	if got := texts(toks); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !toks[len(toks)-2].Regexp || toks[len(toks)-2].Line != 5 {
		t.Fatalf("bad regexp token %+v", toks[len(toks)-2])
	}
	for _, bad := range []string{"a = 'x\n", "a = `x${y", "/* x", "a = /x\n/"} {
		if _, err := JS([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDepth(t *testing.T) {
	toks, _ := JS([]byte("f(a, [b]) }"))
	var d []int
	for _, t := range toks {
		d = append(d, t.Depth)
	}
	// "(" and "[" carry the depth before them, ")" and "]" the depth after;
	// an unmatched "}" never goes below 0.
	want := []int{0, 0, 1, 1, 1, 2, 1, 0, 0}
	for i := range want {
		if d[i] != want[i] {
			t.Fatalf("depths %v, want %v", d, want)
		}
	}
}

// A regexp and strings with quotes inside ${…}, as in npm's own sources.
func TestJSTemplateCode(t *testing.T) {
	src := "const r = `'${input.replace(/'/g, `'\\\\''`)}'`\n  .replace(/\\\\'''/g, `\\\\'`)\nx(`}${ a(' \\'b\\' ') }`)\n"
	toks, err := JS([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(toks), `const r = S('1') . replace ( S() , S(\') ) x ( S(}1) )`; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	for _, bad := range []string{"`${`${'}`}`", "`${ /x", strings.Repeat("`${", 300)} {
		if _, err := JS([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
