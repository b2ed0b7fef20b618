package checkcmd

import (
	"path"
	"strings"
)

// Program is a file that a command line runs as a program: the command
// itself when it is a path (./check.sh), the script an interpreter runs
// (sh check.sh, python3 tests/run.py), a sourced file (. ./env.sh), or the
// program file of awk -f and sed -f. Files a command only reads (the
// arguments of grep, cmp, ruff, mypy, go; the file of python3 -m
// py_compile, node --check, bash -n) are never programs.
type Program struct {
	// Path is slash-separated, relative to the directory the line runs in
	// (or absolute), with any cd before it applied.
	Path string
	// Why says how the line runs it: "`sh check.sh` runs check.sh".
	Why string
}

// Programs lists the files a command line runs as programs. Words only
// known when the line runs ($X, globs) are left out, and so are commands
// after a cd to such a place.
func Programs(line string) ([]Program, error) {
	p, err := parse(line, "", 0)
	if err != nil {
		return nil, err
	}
	var out []Program
	seen := map[string]bool{}
	for _, c := range p.cmds {
		for _, pr := range programsOf(c, 0) {
			if !seen[pr.Path] {
				seen[pr.Path] = true
				out = append(out, pr)
			}
		}
	}
	return out, nil
}

// Unwrap skips the programs that run another program named after their own
// options (env, timeout, nice, exec, xargs, uv run …) and returns the words
// from the program that does the work.
func Unwrap(words []Word) []Word {
	for n := 0; n < 8 && len(words) > 0; n++ {
		rest, ok := unwrapOnce(words)
		if !ok {
			break
		}
		words = rest
	}
	return words
}

func unwrapOnce(words []Word) ([]Word, bool) {
	name := path.Base(words[0].Text)
	args := words[1:]
	skipOpts := func(withArg string) []Word {
		for len(args) > 0 && strings.HasPrefix(args[0].Text, "-") && args[0].Text != "-" {
			a := args[0].Text
			args = args[1:]
			if a == "--" {
				break
			}
			if len(a) == 2 && strings.ContainsRune(withArg, rune(a[1])) && len(args) > 0 {
				args = args[1:]
			}
		}
		return args
	}
	switch name {
	case "env":
		args = skipOpts("uCS")
		for len(args) > 0 && strings.Contains(args[0].Text, "=") && !strings.HasPrefix(args[0].Text, "=") {
			args = args[1:]
		}
	case "timeout":
		args = skipOpts("sk")
		if len(args) > 0 {
			args = args[1:] // the duration
		}
	case "nice", "ionice", "chrt":
		args = skipOpts("ncp")
	case "nohup", "setsid", "time", "command", "builtin", "stdbuf", "unbuffer", "chronic", "caffeinate":
		if name == "command" && len(args) > 0 && (args[0].Text == "-v" || args[0].Text == "-V") {
			return nil, true // only looks the name up
		}
		args = skipOpts("ioe")
	case "exec":
		args = skipOpts("a")
	case "sudo", "doas":
		args = skipOpts("ugCDhprTU")
	case "xargs":
		args = skipOpts("aEIdLnPs")
	case "uv", "poetry", "pipenv", "pdm", "hatch", "rye", "bundle", "pnpm", "yarn":
		if len(args) > 0 && (args[0].Text == "run" || args[0].Text == "exec") {
			args = args[1:]
			args = skipOpts("")
			if len(args) > 0 && !strings.Contains(args[0].Text, "/") && looksLikeScript(args[0].Text) {
				// uv run check.py runs the file.
				args = append([]Word{{Text: "./" + args[0].Text, Dynamic: args[0].Dynamic}}, args[1:]...)
			}
			return args, true
		}
		return nil, false
	default:
		return nil, false
	}
	return args, true
}

func looksLikeScript(name string) bool {
	switch path.Ext(name) {
	case ".py", ".sh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl", ".php", ".lua", ".R":
		return true
	}
	return false
}

// interp says how an interpreter reads its arguments.
type interp struct {
	stop    string   // short options after which there is no script file (code, module, syntax check, stdin)
	recurse string   // short option whose argument is a shell command line (sh -c)
	withArg string   // short options that take an argument
	file    string   // short option whose argument is the program file (awk -f, php -f)
	longs   []string // long options after which there is no script file
	longArg []string // long options that take an argument when written without =
	noPos   bool     // the first positional argument is not a file (awk's program text)
	subcmds bool     // deno, bun: run x.ts / test x.ts / x.ts
}

var shellInterp = &interp{stop: "ns", recurse: "c", withArg: "oO", longs: []string{"--version", "--help"}, longArg: []string{"--rcfile", "--init-file"}}

var interpreters = map[string]*interp{
	"sh": shellInterp, "bash": shellInterp, "zsh": shellInterp, "dash": shellInterp, "ksh": shellInterp,
	"mksh": shellInterp, "ash": shellInterp, "fish": {stop: "nc", longs: []string{"--no-execute", "--command", "--version"}},
	"python": {stop: "cmV", withArg: "WX", longs: []string{"--version", "--help"}},
	"pypy":   {stop: "cmV", withArg: "WX", longs: []string{"--version", "--help"}},
	"node": {stop: "epcvh", withArg: "rC", longs: []string{"--eval", "--print", "--check", "--version", "--help", "--interactive"},
		longArg: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions", "--env-file", "--input-type", "--title"}},
	"nodejs":  nil, // same as node, set in init
	"tsx":     {stop: "ep", longs: []string{"--eval", "--print", "--version", "--help"}, longArg: []string{"--tsconfig", "--import", "--require"}},
	"ts-node": {stop: "ep", withArg: "rP", longs: []string{"--eval", "--print", "--version", "--help"}, longArg: []string{"--project", "--require", "--compiler"}},
	"deno":    {subcmds: true},
	"bun":     {subcmds: true},
	"ruby":    {stop: "ecvh", withArg: "rICEF", longs: []string{"--version", "--help"}},
	"perl":    {stop: "eEcvh", withArg: "I", longs: []string{"--version", "--help"}},
	"php":     {stop: "lrvhiRBE", withArg: "dcz", file: "f", longs: []string{"--version", "--help", "--syntax-check"}},
	"lua":     {stop: "ev", withArg: "l"},
	"luajit":  {stop: "ev", withArg: "lbj"},
	"Rscript": {stop: "e", longs: []string{"--version", "--help"}},
	"tclsh":   {},
	"pwsh":    {longs: []string{"-Command", "-c", "-EncodedCommand", "-Version", "-Help"}, longArg: []string{"-File"}},
	"awk":     {withArg: "vF", file: "f", noPos: true},
	"gawk":    {withArg: "vF", file: "f", noPos: true},
	"mawk":    {withArg: "vF", file: "f", noPos: true},
	"nawk":    {withArg: "vF", file: "f", noPos: true},
	"sed":     {withArg: "el", file: "f", noPos: true},
}

func init() { interpreters["nodejs"] = interpreters["node"] }

// interpreterOf finds the interpreter of a program name: python3.12 and
// pypy3 are python and pypy; /usr/bin/env-less paths count by their base.
func interpreterOf(prog string) (string, *interp) {
	base := path.Base(prog)
	if in, ok := interpreters[base]; ok {
		return base, in
	}
	trimmed := strings.TrimRight(base, "0123456789.")
	if in, ok := interpreters[trimmed]; ok && trimmed != "" {
		return trimmed, in
	}
	return base, nil
}

// programsOf finds the programs of one simple command.
func programsOf(c Command, depth int) []Program {
	if c.Dir == Unknown {
		return nil
	}
	words := Unwrap(c.Words)
	if len(words) == 0 || words[0].Dynamic {
		return nil
	}
	line := quoteWords(c.Words)
	var out []Program
	add := func(w Word, why string) {
		if w.Dynamic || w.Text == "" || w.Text == "-" {
			return
		}
		p := w.Text
		if !strings.HasPrefix(p, "/") {
			p = path.Join(c.Dir, p)
		}
		out = append(out, Program{Path: path.Clean(p), Why: why})
	}
	prog := words[0].Text
	if strings.Contains(prog, "/") {
		add(words[0], "`"+line+"` runs "+prog)
	}
	args := words[1:]
	if prog == "." || prog == "source" {
		if len(args) > 0 {
			add(args[0], "`"+line+"` sources "+args[0].Text)
		}
		return out
	}
	name, in := interpreterOf(prog)
	if in == nil {
		return out
	}
	if in.subcmds { // deno and bun
		if len(args) > 0 && (args[0].Text == "run" || args[0].Text == "test") {
			args = args[1:]
		} else if len(args) > 0 && !looksLikeScript(args[0].Text) && !strings.Contains(args[0].Text, "/") {
			return out // deno check x.ts, bun install, deno fmt: no script runs
		}
		in = &interp{longArg: []string{"--config", "--import-map", "--env-file", "--preload"}, withArg: "cr"}
	}
	for i := 0; i < len(args); i++ {
		a := args[i].Text
		switch {
		case a == "--":
			if i+1 < len(args) && !in.noPos {
				add(args[i+1], "`"+line+"` runs "+args[i+1].Text)
			}
			return out
		case strings.HasPrefix(a, "--") || name == "pwsh" && strings.HasPrefix(a, "-"):
			opt, _, hasVal := strings.Cut(a, "=")
			if contains(in.longs, opt) {
				return out
			}
			if contains(in.longArg, opt) && !hasVal {
				if name == "pwsh" && strings.EqualFold(opt, "-File") && i+1 < len(args) {
					add(args[i+1], "`"+line+"` runs "+args[i+1].Text)
					return out
				}
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 || strings.HasPrefix(a, "+") && len(a) > 1 && in == shellInterp:
			for j := 1; j < len(a); j++ {
				o := a[j]
				switch {
				case strings.IndexByte(in.recurse, o) >= 0:
					// sh -c 'cmd': the string is a command line of its own.
					if k := i + 1; k < len(args) && !args[k].Dynamic && depth < maxDepth {
						if p, err := parse(args[k].Text, c.Dir, 1); err == nil {
							for _, sc := range p.cmds {
								for _, pr := range programsOf(sc, depth+1) {
									pr.Why = "`" + line + "` runs " + pr.Path
									out = append(out, pr)
								}
							}
						}
					}
					return out
				case strings.IndexByte(in.stop, o) >= 0:
					return out
				case strings.IndexByte(in.file, o) >= 0:
					if j+1 < len(a) {
						add(Word{Text: a[j+1:]}, "`"+line+"` runs "+a[j+1:])
					} else if i+1 < len(args) {
						add(args[i+1], "`"+line+"` runs "+args[i+1].Text)
					}
					return out
				case strings.IndexByte(in.withArg, o) >= 0:
					if j == len(a)-1 {
						i++ // the argument is the next word
					}
					j = len(a)
				}
			}
		default:
			if !in.noPos {
				add(args[i], "`"+line+"` runs "+a)
			}
			return out
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quoteWords writes a command back for messages.
func quoteWords(ws []Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		t := w.Text
		if w.Raw != "" {
			parts[i] = w.Raw
			continue
		}
		if t == "" || strings.ContainsAny(t, " \t'\"\\|&;<>()") {
			t = "'" + strings.ReplaceAll(t, "'", `'\''`) + "'"
		}
		parts[i] = t
	}
	return strings.Join(parts, " ")
}
