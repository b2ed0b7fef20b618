package tells

import (
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

// Imports lists what a Python or JavaScript/TypeScript file imports, as
// written: Python's dotted names (relative ones keep their leading dots;
// `from a import b` gives both "a" and "a.b", since b may be a module),
// JavaScript's specifiers (require, import … from, export … from,
// import()). dynamic is true when the file imports a name computed at run
// time (importlib.import_module, __import__, require or import() of what
// is not a string literal), or when the file cannot be read: the caller
// cannot know what it reaches.
func Imports(path string, src []byte) (mods []string, dynamic bool) {
	switch Language(path) {
	case "python":
		toks, err := srctok.Python(src)
		if err != nil {
			return nil, true
		}
		return pyImportList(toks)
	case "js":
		toks, err := srctok.JS(src)
		if err != nil {
			return nil, true
		}
		return jsImportList(toks)
	}
	return nil, false
}

func pyImportList(toks []srctok.Token) (mods []string, dynamic bool) {
	// relDots reads the leading dots of a relative import.
	relDots := func(i int) (string, int) {
		d := ""
		for i < len(toks) && toks[i].Kind == srctok.Op && (toks[i].Text == "." || toks[i].Text == "...") {
			d += toks[i].Text
			i++
		}
		return d, i
	}
	start := true
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		lineStart := start
		start = t.Kind == srctok.Newline || t.Kind == srctok.Op && (t.Text == ";" || t.Text == ":")
		if t.Kind != srctok.Ident {
			continue
		}
		switch {
		case lineStart && t.Text == "import":
			for j := i + 1; j < len(toks); {
				name, k := dotted(toks, j)
				if name == "" {
					break
				}
				mods = append(mods, name)
				if seq(toks, k, "as") {
					k += 2
				}
				if !seq(toks, k, ",") {
					break
				}
				j = k + 1
			}
		case lineStart && t.Text == "from":
			dots, j := relDots(i + 1)
			name, k := dotted(toks, j)
			if name == "import" { // from . import x: the keyword, not a module
				name, k = "", j
			}
			mod := dots + name
			if mod == "" || !seq(toks, k, "import") {
				continue
			}
			mods = append(mods, mod)
			sep := "."
			if name == "" {
				sep = ""
			}
			for k++; k < len(toks) && toks[k].Kind != srctok.Newline && !seq(toks, k, ";"); k++ {
				if toks[k].Kind == srctok.Ident && toks[k-1].Text != "as" && toks[k].Text != "as" {
					mods = append(mods, mod+sep+toks[k].Text)
				}
			}
		case t.Text == "import_module" || t.Text == "__import__" || t.Text == "spec_from_file_location" || t.Text == "run_path" || t.Text == "run_module":
			if !seq(toks, i+1, "(") {
				continue
			}
			if i+3 < len(toks) && toks[i+2].Kind == srctok.String && (toks[i+3].Text == ")" || toks[i+3].Text == ",") && t.Text != "spec_from_file_location" && t.Text != "run_path" {
				mods = append(mods, toks[i+2].Value)
				continue
			}
			dynamic = true
		case t.Text == "exec" || t.Text == "eval":
			if seq(toks, i+1, "(") && (i == 0 || toks[i-1].Text != ".") {
				dynamic = true
			}
		}
	}
	return mods, dynamic
}

func jsImportList(toks []srctok.Token) (mods []string, dynamic bool) {
	for i, t := range toks {
		if t.Kind != srctok.Ident || i > 0 && toks[i-1].Text == "." {
			continue
		}
		switch t.Text {
		case "require", "import":
			if seq(toks, i+1, "(") {
				if i+3 < len(toks) && toks[i+2].Kind == srctok.String && !toks[i+2].Regexp && !strings.Contains(toks[i+2].Text, "${") && toks[i+3].Text == ")" {
					mods = append(mods, toks[i+2].Value)
				} else if t.Text == "import" || !seq(toks, i+2, ")") {
					dynamic = true
				}
				continue
			}
			if t.Text == "import" && i+1 < len(toks) && toks[i+1].Kind == srctok.String {
				mods = append(mods, toks[i+1].Value) // import 'side-effect'
			}
		case "from":
			if i+1 < len(toks) && toks[i+1].Kind == srctok.String && !toks[i+1].Regexp {
				mods = append(mods, toks[i+1].Value)
			}
		case "eval", "Function":
			if seq(toks, i+1, "(") {
				dynamic = true
			}
		}
	}
	return mods, dynamic
}
