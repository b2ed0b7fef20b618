package tells

import (
	"strings"

	"github.com/looprinter/looprinter/srctok"
)

// pyContextReads are the names (after import aliases are resolved) whose
// read is a read of the run's context: the loaded modules, the command
// line, the call stack, the objects alive, the __main__ module.
var pyContextReads = []string{"sys.modules", "sys.argv", "sys.orig_argv", "sys._getframe", "sys._current_frames",
	"sys.gettrace", "sys.getprofile", "inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace",
	"traceback.extract_stack", "traceback.walk_stack", "traceback.format_stack", "traceback.print_stack",
	"gc.get_objects", "gc.get_referrers", "__main__", "builtins.__import__"}

// pyFrameworks are the test frameworks' modules an assignment into is a
// patch of the framework.
var pyFrameworks = []string{"unittest", "pytest", "_pytest", "doctest"}

// pyImports reads the module's import statements: each local name and the
// dotted name it stands for (import a.b → a: a; import a.b as c → c: a.b;
// from a.b import c as d → d: a.b.c). Relative imports name nothing here.
func pyImports(toks []srctok.Token) map[string]string {
	out := map[string]string{}
	lineStart := true
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		start := lineStart
		lineStart = t.Kind == srctok.Newline || t.Kind == srctok.Op && t.Text == ";"
		if !start || t.Kind != srctok.Ident {
			continue
		}
		switch t.Text {
		case "import":
			for i++; i < len(toks); i++ {
				name, j := dotted(toks, i)
				if name == "" {
					break
				}
				local := name[:strings.IndexByte(name+".", '.')]
				q := local
				if seq(toks, j, "as") && j+1 < len(toks) && toks[j+1].Kind == srctok.Ident {
					local, q, j = toks[j+1].Text, name, j+2
				}
				out[local] = q
				if !seq(toks, j, ",") {
					i = j - 1
					break
				}
				i = j
			}
		case "from":
			mod, j := dotted(toks, i+1)
			if mod == "" || !seq(toks, j, "import") {
				continue
			}
			for i = j + 1; i < len(toks); i++ {
				if seq(toks, i, "(") || seq(toks, i, ",") || seq(toks, i, ")") {
					continue
				}
				if toks[i].Kind != srctok.Ident {
					i--
					break
				}
				name, local := toks[i].Text, toks[i].Text
				if seq(toks, i+1, "as") && i+2 < len(toks) {
					local = toks[i+2].Text
					i += 2
				}
				out[local] = mod + "." + name
			}
		}
	}
	return out
}

// dotted reads a dotted name at toks[i] (a.b.c), returning it and the index
// after it ("" when toks[i] is no name).
func dotted(toks []srctok.Token, i int) (string, int) {
	if i >= len(toks) || toks[i].Kind != srctok.Ident {
		return "", i
	}
	name := toks[i].Text
	i++
	for i+1 < len(toks) && seq(toks, i, ".") && toks[i+1].Kind == srctok.Ident {
		name += "." + toks[i+1].Text
		i += 2
	}
	return name, i
}

// pyChain resolves the name at toks[i] through the imports, with the
// attributes after it: q is the dotted name it stands for ("" when the
// name is not an import), end the index after the attributes.
func pyChain(toks []srctok.Token, i int, imports map[string]string) (q string, end int) {
	t := toks[i]
	if t.Kind != srctok.Ident || i > 0 && toks[i-1].Text == "." && toks[i-1].Kind == srctok.Op {
		return "", i
	}
	q, ok := imports[t.Text]
	if !ok {
		return "", i
	}
	j := i + 1
	for j+1 < len(toks) && seq(toks, j, ".") && toks[j+1].Kind == srctok.Ident {
		q += "." + toks[j+1].Text
		j += 2
	}
	return q, j
}

func under(q, prefix string) bool {
	return q == prefix || strings.HasPrefix(q, prefix+".")
}

// pyContext adds the module's reads of the run's context
// (ReadsRunContext), its patches of a test framework through any import
// name (PatchesTestFramework) and its exits on import through an imported
// name (from sys import exit). Reads under the module's
// `if __name__ == "__main__":` guard are a program's, not a library's:
// they are left out.
func pyContext(src []byte, toks []srctok.Token, mainModule bool) []Tell {
	imports := pyImports(toks)
	pyAssignAliases(toks, imports)
	if len(imports) == 0 {
		return nil
	}
	var out []Tell
	start := 0
	guard := false
	for i, t := range toks {
		if t.Kind != srctok.Newline {
			continue
		}
		line := toks[start:i]
		start = i + 1
		if len(line) == 0 {
			continue
		}
		if line[0].Indent == 0 {
			guard = isMainGuard(line)
		}
		if line[0].Text == "import" || line[0].Text == "from" {
			continue // the names it binds are told where they are read
		}
		out = append(out, pyPatches(src, line, imports)...)
		topLevel := !mainModule && line[0].Indent == 0 && line[0].Text != "def" && line[0].Text != "class" && line[0].Text != "async" && !guard && !hasIdent(line, "lambda", "__name__")
		for k := range line {
			q, end := pyChain(line, k, imports)
			if q == "" {
				continue
			}
			switch {
			case under(q, "os._exit"), topLevel && under(q, "sys.exit") && !seq(line, k, "sys", ".", "exit"):
				out = append(out, tokTell(src, line[k], ExitsEarly))
			case guard:
			case pyEnvRead(line, k, end, q):
				out = append(out, tokTell(src, line[k], ReadsRunContext))
			default:
				for _, p := range pyContextReads {
					if under(q, p) {
						out = append(out, tokTell(src, line[k], ReadsRunContext))
						break
					}
				}
			}
		}
	}
	return out
}

// isMainGuard says whether a top-level line is `if __name__ == "__main__":`.
func isMainGuard(line []srctok.Token) bool {
	return len(line) >= 4 && line[0].Text == "if" && hasIdent(line, "__name__") && func() bool {
		for _, t := range line {
			if t.Kind == srctok.String && t.Value == "__main__" {
				return true
			}
		}
		return false
	}()
}

// pyEnvRead says whether the environment is read at line[k:end] (q: the
// name it resolved to) other than by a literal key: os.environ iterated,
// copied or passed on; os.environ[key], os.environ.get(key), os.getenv(key)
// with a key that is not a string literal.
func pyEnvRead(line []srctok.Token, k, end int, q string) bool {
	literalArg := func(j int) bool {
		return j+2 < len(line) && line[j].Text == "(" && line[j+1].Kind == srctok.String && (line[j+2].Text == "," || line[j+2].Text == ")")
	}
	switch q {
	case "os.environ", "os.environb":
		if end+2 < len(line) && line[end].Text == "[" && line[end+1].Kind == srctok.String && line[end+2].Text == "]" {
			return false
		}
		if k >= 2 && line[k-1].Text == "in" && (line[k-2].Kind == srctok.String || line[k-2].Text == "not" && k >= 3 && line[k-3].Kind == srctok.String) {
			return false
		}
		return true
	case "os.getenv", "os.getenvb", "os.environ.get", "os.environ.setdefault", "os.environ.pop", "os.environb.get":
		return !literalArg(end)
	}
	return under(q, "os.environ") || under(q, "os.environb")
}

// pyPatches finds an assignment (or del, setattr, delattr) into a test
// framework's module through any of its import names.
func pyPatches(src []byte, line []srctok.Token, imports map[string]string) []Tell {
	framework := func(q string) bool {
		for _, f := range pyFrameworks {
			if under(q, f) {
				return true
			}
		}
		return false
	}
	var out []Tell
	base := line[0].Depth
	assign := -1
	for k, t := range line {
		if t.Kind == srctok.Op && t.Depth == base && isPyAssign(t.Text) {
			assign = k
			break
		}
	}
	for k := range line {
		q, end := pyChain(line, k, imports)
		if q == "" || !framework(q) {
			continue
		}
		target := assign > k && end > k+1 && (k == 0 || line[k-1].Text == "," || line[k-1].Text == "(" && k == 1)
		del := line[0].Text == "del" && end > k+1
		call := k >= 2 && line[k-1].Text == "(" && (line[k-2].Text == "setattr" || line[k-2].Text == "delattr")
		if target || del || call {
			out = append(out, tokTell(src, line[k], PatchesTestFramework))
		}
	}
	return out
}

func isPyAssign(op string) bool {
	switch op {
	case "==", "!=", "<=", ">=", ":=", "->":
		return false
	}
	return strings.HasSuffix(op, "=")
}
