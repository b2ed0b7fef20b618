package tells

import (
	"strings"
	"testing"
)

// FuzzScan: no input makes a scanner panic, and every tell is on a line of
// the input with an escaped excerpt.
func FuzzScan(f *testing.F) {
	f.Add(goInitForger, uint8(0))
	f.Add("import os\nos._exit(0)\nprint(f'{x!r:>{w}} PASSED')\n", uint8(1))
	f.Add("console.log(`ok ${`${1}`}`); /x[/]/g.test(s) ? a / b : process.exit(0)\n", uint8(2))
	f.Add("r'''\\'''\nb\"\\x16\"", uint8(1))
	f.Fuzz(func(t *testing.T, src string, lang uint8) {
		path := []string{"a.go", "a.py", "a.ts"}[int(lang)%3]
		lines := strings.Count(src, "\n") + 1
		for _, tl := range Scan(path, []byte(src)) {
			if tl.Line < 1 || tl.Line > lines || tl.Column < 1 {
				t.Fatalf("%s: tell %v outside the input (%d lines)", path, tl, lines)
			}
			for _, r := range tl.What {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("%s: unescaped control character in %q", path, tl.What)
				}
			}
		}
	})
}

func FuzzGoFramingForged(f *testing.F) {
	f.Add("\x16--- PASS: TestX (0.00s)\n{\"Action\":\"pass\",\"Test\":\"TestY/z\"}\n=== RUN\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, fg := range GoFramingForged([]byte(out), map[string]bool{"TestX": true}) {
			if fg.Line < 1 || fg.Test == "" {
				t.Fatalf("bad %v", fg)
			}
		}
	})
}
