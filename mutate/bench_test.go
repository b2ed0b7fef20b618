package mutate

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/looprinter/looprinter/srctok"
)

// bigGo is a Go file of about n lines of small functions, and 20 lines
// spread over it that a loop "changed".
func bigGo(n int) ([]byte, []int) {
	var b strings.Builder
	b.WriteString("package big\n\n")
	line := 3
	var fnStarts []int
	for i := 0; line < n; i++ {
		fmt.Fprintf(&b, "// F%d adds.\nfunc F%d(a, b int) int {\n\tif a < b && b > %d {\n\t\ta++\n\t}\n\treturn a + b\n}\n\n", i, i, i)
		fnStarts = append(fnStarts, line+2) // the if line
		line += 8
	}
	var lines []int
	for k := 0; k < 20; k++ {
		lines = append(lines, fnStarts[k*len(fnStarts)/20])
	}
	return []byte(b.String()), lines
}

// The parsed slices hold the changed declarations, not the file: O(change).
func TestGoParsesOnlyChangedDeclarations(t *testing.T) {
	src, lines := bigGo(10000)
	want := map[int]bool{}
	for _, l := range lines {
		want[l] = true
	}
	parsed := 0
	for _, c := range goChunks(src, newLineIndex(src), want) {
		parsed += c.end - c.start
	}
	if parsed == 0 || parsed > 20*200 {
		t.Fatalf("parsed %d bytes of %d for 20 changed lines", parsed, len(src))
	}
	ms, err := MutantsMax("big.go", src, lines, 0)
	if err != nil {
		t.Fatal(err)
	}
	// each changed if line: negate, flip <, swap &&, flip >, change constant
	if len(ms) != 20*5 {
		t.Fatalf("got %d mutants, want %d", len(ms), 20*5)
	}
}

// A slice that does not parse on its own (here a changed line inside a raw
// string whose lines look like declarations) falls back to the whole file.
func TestGoRawStringFallsBack(t *testing.T) {
	src := "package p\n\nvar tmpl = `\nfunc x() {\n\tif a < b {\n`\n\nfunc f(a, b int) bool {\n\treturn a < b\n}\n"
	ms, err := Mutants("p.go", []byte(src), []int{5, 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Line != 9 {
			t.Fatalf("mutated inside a raw string: %s", m)
		}
	}
	if len(ms) != 2 {
		t.Fatalf("got %v", ms)
	}
}

// go test ./mutate -bench Mutants -run '^$': the cost of 20 changed lines
// stays flat from a 1,000-line to a 100,000-line file (only the copy of
// each mutant's Source grows with the file).
func BenchmarkMutants(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		src, lines := bigGo(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Mutants("big.go", src, lines); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The same without the copies: finding the mutants alone.
func BenchmarkGoEdits(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		src, lines := bigGo(n)
		want := map[int]bool{}
		for _, l := range lines {
			want[l] = true
		}
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := goEdits(src, want); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzMutants(f *testing.F) {
	f.Add(goSrc, uint8(0), uint16(10))
	f.Add(pySrc, uint8(1), uint16(2))
	f.Add(jsSrc, uint8(2), uint16(8))
	f.Fuzz(func(t *testing.T, src string, lang uint8, line uint16) {
		path := []string{"a.go", "a.py", "a.ts"}[int(lang)%3]
		ms, err := Mutants(path, []byte(src), []int{int(line)%50 + 1, int(line)%7 + 1})
		if err != nil {
			return
		}
		if len(ms) > DefaultMax {
			t.Fatalf("%d mutants", len(ms))
		}
		for _, m := range ms {
			if m.Line != int(line)%50+1 && m.Line != int(line)%7+1 {
				t.Fatalf("mutant on line %d", m.Line)
			}
			// a mutant of a file that parses still parses (Go) or
			// still tokenizes (Python, JavaScript).
			var err error
			switch path {
			case "a.go":
				if _, perr := parser.ParseFile(token.NewFileSet(), "", src, 0); perr == nil {
					_, err = parser.ParseFile(token.NewFileSet(), "", m.Source, 0)
				}
			case "a.py":
				_, err = srctok.Python(m.Source)
			case "a.ts":
				_, err = srctok.JS(m.Source)
			}
			if err != nil {
				t.Fatalf("mutant %s of\n%s\ndoes not read: %v\n%s", m, src, err, m.Source)
			}
		}
	})
}

// What a parse of the whole file costs, for comparison with GoEdits.
func BenchmarkWholeFileParse(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		src, _ := bigGo(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
