package checkcmd

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// shellBuiltins are command words that are not programs on PATH.
var shellBuiltins = map[string]bool{
	"test": true, "[": true, "[[": true, "cd": true, "echo": true, "printf": true, "true": true, "false": true,
	"exit": true, "export": true, "set": true, "unset": true, "source": true, ".": true, "eval": true, ":": true,
	"read": true, "shift": true, "trap": true, "wait": true, "type": true, "umask": true, "ulimit": true,
	"pushd": true, "popd": true, "return": true, "local": true, "alias": true, "exec": true, "command": true,
}

// CheckRunnable finds the program a check line starts and, when it cannot
// start, says why: the program is not on PATH (the shell's exit 127), a
// path to it does not exist or is not executable (126), or the script an
// interpreter or `.` would run does not exist. Only the line's first
// command is checked: later ones may be built by it. pathEnv is the PATH to
// search.
func CheckRunnable(line, dir, pathEnv string) (prog, why string) {
	p, err := parse(line, "", 0)
	if err != nil {
		return "", "cannot be read: " + err.Error()
	}
	var first *Command
	for i := range p.cmds {
		if !p.cmds[i].Nested {
			first = &p.cmds[i]
			break
		}
	}
	if first == nil {
		return "", ""
	}
	words := Unwrap(first.Words)
	if len(words) == 0 {
		return "", ""
	}
	prog = words[0].Text
	if words[0].Dynamic || strings.ContainsAny(prog, "$`") {
		return prog, ""
	}
	if !shellBuiltins[prog] {
		if _, err := FindProgram(prog, dir, pathEnv); err != nil {
			if strings.Contains(prog, "/") {
				full := prog
				if !filepath.IsAbs(full) {
					full = filepath.Join(dir, full)
				}
				if st, serr := os.Stat(full); serr == nil && !st.IsDir() {
					return prog, prog + " is not executable"
				}
				return prog, prog + " does not exist (relative to " + dir + ")"
			}
			return prog, "program " + prog + " not found on PATH"
		}
	}
	// sh script.sh, . ./env.sh: the script must be there.
	for _, pr := range programsOf(Command{Words: words, Dir: first.Dir}, 0) {
		if pr.Path == path.Clean(prog) {
			continue
		}
		full := filepath.FromSlash(pr.Path)
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, full)
		}
		if _, err := os.Stat(full); err != nil {
			return prog, fmt.Sprintf("the script %s does not exist (relative to %s)", pr.Path, dir)
		}
		break
	}
	return prog, ""
}

// RunFix is the fix for a problem CheckRunnable found in a check listed
// under key (verify, objective_verify, setup) of the loop file.
func RunFix(prog, why, key string) string {
	switch {
	case strings.Contains(why, "not executable"):
		return "chmod +x " + prog + ", or run it with sh " + prog
	case strings.Contains(why, "does not exist"):
		return fmt.Sprintf("create it (and chmod +x it), or correct the path under %s: in the loop file", key)
	case strings.Contains(why, "cannot be read"):
		return "quote the command so that sh can read it"
	}
	return fmt.Sprintf("install %s, or change the check under %s: in the loop file", prog, key)
}

// NegatedCannotRun says why a negated check (`! grep -q TODO a.txt`)
// that passed judged nothing: a program one of its negated commands
// starts is not there (a shell's 127 negated is 0, a pass). prog is the
// program, why "" when every negated program was found.
func NegatedCannotRun(line, dir, pathEnv string) (prog, why string) {
	p, err := parse(line, "", 0)
	if err != nil {
		return "", ""
	}
	for i, c := range p.cmds {
		if !c.Bang || c.Nested {
			continue
		}
		// Every command of the negated pipeline: a missing program
		// anywhere in it can flip its status.
		for j := i; j < len(p.cmds); j++ {
			pc := p.cmds[j]
			if j > i && (pc.Nested || pc.Op != "|") {
				break
			}
			w := Unwrap(pc.Words)
			if len(w) == 0 || w[0].Dynamic || strings.ContainsAny(w[0].Text, "$`") || shellBuiltins[w[0].Text] {
				continue
			}
			if _, err := FindProgram(w[0].Text, dir, pathEnv); err != nil {
				what := "program " + w[0].Text + " not found"
				if strings.Contains(w[0].Text, "/") {
					what = w[0].Text + " does not exist or is not executable (relative to " + dir + ")"
				}
				return w[0].Text, what + ", and `!` turns its failure into a pass"
			}
		}
	}
	return "", ""
}

// ExitHint explains a check that exited 127 (command not found) or 126
// (not executable): the check could not run, which is not a failure of the
// work. ok is false for other exit codes.
func ExitHint(line, dir, pathEnv string, code int, key string) (why, fix string, ok bool) {
	if code != 126 && code != 127 {
		return "", "", false
	}
	if prog, w := CheckRunnable(line, dir, pathEnv); w != "" {
		return "the check could not run: " + w, RunFix(prog, w, key), true
	}
	if code == 127 {
		return "the check could not run (exit 127): a program it starts was not found",
			fmt.Sprintf("run `%s` yourself in %s and install what is missing, or correct it under %s: in the loop file", line, dir, key), true
	}
	return "the check could not run (exit 126): a program it starts is not executable",
		fmt.Sprintf("run `%s` yourself in %s, chmod +x what it starts, or correct it under %s: in the loop file", line, dir, key), true
}

// FindProgram finds a program: a path (relative to dir) or a name on
// pathEnv. It must be an executable file.
func FindProgram(prog, dir, pathEnv string) (string, error) {
	if strings.Contains(prog, "/") {
		p := prog
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", p)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
