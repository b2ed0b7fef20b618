package checkcmd

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// shellCannotRun is the shell's line for a program it could not start:
// dash's "/bin/sh: 1: ./lint.sh: not found", bash's "bash: line 1: lint:
// command not found", "…: Permission denied".
var shellCannotRun = regexp.MustCompile(`^(?:/\S*/)?(?:sh|dash|bash|ash|busybox)(?:: \d+|: line \d+)?: (\S+): ((?:command )?not found|No such file or directory|Permission denied)$`)

// shellExit is the status the shell gives a program it could not start.
func shellExit(why string) string {
	if why == "Permission denied" {
		return "126"
	}
	return "127"
}

// outcome is the set of ways a command list can end.
type outcome uint8

const (
	oZero    outcome = 1 << iota // status 0, the line goes on
	oFail                        // non-zero status, the line goes on
	oExit0                       // exit 0: the line ended with status 0
	oExitErr                     // exit with a non-zero status
)

const oAny = oZero | oFail

// passFilters exit 0 whatever they read: a pipe into one of them hides the
// status of the command before it.
var passFilters = map[string]bool{"tee": true, "cat": true, "head": true, "tail": true, "sort": true, "uniq": true,
	"wc": true, "cut": true, "tr": true, "column": true, "nl": true, "fold": true, "less": true, "more": true}

// VacuousCheck tells whether a check command cannot fail, and why, naming
// the part that makes it pass: `|| true`, `; exit 0`, a bare `true` or `:`,
// grep for the empty string, a pipe into tail, a command sent to the
// background. It reads the line as /bin/sh -c would; a line it cannot read,
// or one with compound commands (if, while, subshells), is not called
// vacuous.
func VacuousCheck(cmd string) (why string, vacuous bool) {
	if strings.TrimSpace(cmd) == "" {
		return "the check is empty: it always passes", true
	}
	p, err := parse(cmd, "", 0)
	if err != nil || !p.flat {
		return "", false
	}
	var top []Command
	for _, c := range p.cmds {
		if !c.Nested {
			top = append(top, c)
		}
	}
	if len(top) == 0 {
		return "", false
	}
	ev := &evaluator{}
	if res := ev.list(top); res&(oFail|oExitErr) != 0 {
		return "", false
	}
	return explain(top, ev), true
}

type evaluator struct {
	errexit, pipefail bool
	emptyGrep         *Command
}

// list evaluates commands joined by ; & && || |.
func (ev *evaluator) list(cmds []Command) outcome {
	// Split into and-or lists at ; and &.
	res := oZero
	start := 0
	for i := 0; i <= len(cmds); i++ {
		if i < len(cmds) && (i == start || (cmds[i].Op != ";" && cmds[i].Op != "&")) {
			continue
		}
		andOr := cmds[start:i]
		background := andOr[len(andOr)-1].Bg
		next := res & (oExit0 | oExitErr)
		for _, in := range []outcome{oZero, oFail} {
			if res&in == 0 {
				continue
			}
			r := ev.andOr(andOr, in)
			if background {
				r = oZero
			}
			if ev.errexit && r&oFail != 0 {
				r = r&^oFail | oExitErr
			}
			next |= r
		}
		res = next
		start = i
	}
	return res
}

// andOr evaluates pipelines joined by && and ||, given the status before.
func (ev *evaluator) andOr(cmds []Command, in outcome) outcome {
	start := 0
	var res outcome
	first := true
	op := ""
	for i := 0; i <= len(cmds); i++ {
		if i < len(cmds) && (i == start || cmds[i].Op == "|") {
			continue
		}
		pipe := cmds[start:i]
		if first {
			res = ev.pipeline(pipe, in)
			first = false
		} else {
			next := res & (oExit0 | oExitErr)
			switch op {
			case "&&":
				if res&oZero != 0 {
					next |= ev.pipeline(pipe, oZero)
				}
				next |= res & oFail
			case "||":
				if res&oFail != 0 {
					next |= ev.pipeline(pipe, oFail)
				}
				next |= res & oZero
			}
			res = next
		}
		if i < len(cmds) {
			op = cmds[i].Op
		}
		start = i
	}
	return res
}

// pipeline evaluates commands joined by |: the status is the last one's
// (with pipefail, any failure counts).
func (ev *evaluator) pipeline(cmds []Command, in outcome) outcome {
	if len(cmds) == 0 {
		return in
	}
	var res outcome
	if len(cmds) == 1 {
		res = ev.simple(cmds[0], in)
	} else {
		// Every part of a pipeline runs in a subshell: exit ends only it.
		last := ev.simple(cmds[len(cmds)-1], in)
		res = sub(last)
		if ev.pipefail {
			for _, c := range cmds[:len(cmds)-1] {
				if sub(ev.simple(c, in))&oFail != 0 {
					res |= oFail
				}
			}
		}
	}
	if cmds[0].Bang {
		var r outcome
		if res&oZero != 0 {
			r |= oFail
		}
		if res&oFail != 0 {
			r |= oZero
		}
		res = r | res&(oExit0|oExitErr)
	}
	return res
}

func sub(o outcome) outcome {
	r := o & oAny
	if o&oExit0 != 0 {
		r |= oZero
	}
	if o&oExitErr != 0 {
		r |= oFail
	}
	return r
}

// simple evaluates one command, given the status before it.
func (ev *evaluator) simple(c Command, in outcome) outcome {
	w := c.Words
	switch c.Name() {
	case "true", ":":
		return oZero
	case "false":
		return oFail
	case "echo", "printf":
		return oZero
	case "exit":
		if len(w) == 1 || w[1].Text == "$?" {
			if in == oZero {
				return oExit0
			}
			return oExitErr
		}
		if w[1].Dynamic {
			return oExit0 | oExitErr
		}
		if strings.TrimLeft(w[1].Text, "0") == "" {
			return oExit0
		}
		return oExitErr
	case "set":
		for i := 1; i < len(w); i++ {
			t := w[i].Text
			if !strings.HasPrefix(t, "-") || strings.HasPrefix(t, "--") {
				continue
			}
			if strings.Contains(t, "e") {
				ev.errexit = true
			}
			if strings.HasSuffix(t, "o") && i+1 < len(w) {
				switch w[i+1].Text {
				case "errexit":
					ev.errexit = true
				case "pipefail":
					ev.pipefail = true
				}
				i++
			}
		}
		return oZero
	case "grep", "egrep", "fgrep":
		if emptyGrep(w) {
			if ev.emptyGrep == nil {
				cc := c
				ev.emptyGrep = &cc
			}
			return oZero
		}
	default:
		if passFilters[path.Base(c.Name())] && c.Op == "|" {
			return oZero
		}
	}
	return oAny
}

// emptyGrep: grep whose pattern is the empty string (without -v) matches
// every line.
func emptyGrep(w []Word) bool {
	for i := 1; i < len(w); i++ {
		a := w[i]
		if a.Dynamic {
			return false
		}
		switch {
		case a.Text == "-e" || a.Text == "--regexp":
			return i+1 < len(w) && w[i+1].Text == "" && !w[i+1].Dynamic && !hasInvert(w)
		case strings.HasPrefix(a.Text, "--regexp="):
			return a.Text == "--regexp=" && !hasInvert(w)
		case a.Text == "--":
			return i+1 < len(w) && w[i+1].Text == "" && !hasInvert(w)
		case strings.HasPrefix(a.Text, "-") && len(a.Text) > 1:
			if a.Text == "-f" || a.Text == "-m" || a.Text == "-A" || a.Text == "-B" || a.Text == "-C" || a.Text == "--file" {
				if a.Text == "-f" || a.Text == "--file" {
					return false
				}
				i++
			}
		default:
			return a.Text == "" && !hasInvert(w)
		}
	}
	return false
}

func hasInvert(w []Word) bool {
	for _, a := range w[1:] {
		t := a.Text
		if t == "--invert-match" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "v") {
			return true
		}
	}
	return false
}

// explain names the part of a vacuous line that makes it pass.
func explain(cmds []Command, ev *evaluator) string {
	line := func(c Command) string { return quoteWords(c.Words) }
	alwaysOK := func(c Command) bool {
		switch c.Name() {
		case "true", ":", "echo", "printf":
			return true
		case "exit":
			return len(c.Words) > 1 && strings.TrimLeft(c.Words[1].Text, "0") == "" && !c.Words[1].Dynamic
		}
		return false
	}
	// cmd || true
	for i, c := range cmds {
		if i > 0 && c.Op == "||" && alwaysOK(c) {
			return fmt.Sprintf("`|| %s` turns every failure of `%s` into a pass", line(c), line(cmds[i-1]))
		}
	}
	// cmd & (in the background)
	for _, c := range cmds {
		if c.Bg {
			return fmt.Sprintf("`%s &` runs in the background: the check passes whatever it returns", line(c))
		}
	}
	if len(cmds) > 0 && cmds[len(cmds)-1].Op == "" && len(cmds) == 1 {
		c := cmds[0]
		switch {
		case ev.emptyGrep != nil:
		case c.Name() == "exit":
			return "`" + line(c) + "` always passes: the check tests nothing"
		case alwaysOK(c):
			return "`" + line(c) + "` always succeeds: the check tests nothing"
		}
	}
	// cmd; exit 0
	for i, c := range cmds {
		if c.Name() == "exit" && i == 0 && len(cmds) > 1 {
			return fmt.Sprintf("`%s` ends the check with status 0 before `%s` runs", line(c), line(cmds[1]))
		}
		if c.Name() == "exit" && i > 0 {
			return fmt.Sprintf("`%s` ends the check with status 0 whatever `%s` returned", line(c), line(cmds[i-1]))
		}
	}
	if last := cmds[len(cmds)-1]; alwaysOK(last) && len(cmds) > 1 && last.Op == ";" {
		return fmt.Sprintf("`; %s` at the end: a check's status is its last command's, and `%s` always succeeds", line(last), line(last))
	}
	for i, c := range cmds {
		if c.Op == "|" && passFilters[path.Base(c.Name())] && i > 0 {
			return fmt.Sprintf("the pipe into `%s` hides the status of `%s`: a pipeline's status is its last command's (add `set -o pipefail;` in front, or drop the pipe)", c.Name(), line(cmds[i-1]))
		}
	}
	if ev.emptyGrep != nil {
		return "`" + line(*ev.emptyGrep) + "` greps for the empty string, which matches every line: it only tells that the input is not empty"
	}
	return "it exits 0 whatever happens"
}

// NegatedRunFailed says why a negated check that passed (`! git grep -q
// TODO`) judged nothing: a program of its negated commands printed that
// it could not run — a line "PROG: …" (`grep: a.txt: No such file or
// directory`), or for git "fatal: …" (`fatal: not a git repository`) —
// or the shell could not start it (`/bin/sh: 1: ./lint.sh: not found`,
// exit 127; `Permission denied`, exit 126), and `!` turned its failure
// into a pass. "" when none did. Reading the
// output can only fail a check, never pass one.
func NegatedRunFailed(line, output string) string {
	p, err := parse(line, "", 0)
	if err != nil {
		return ""
	}
	var progs []string
	named := map[string]bool{}
	for i, c := range p.cmds {
		if !c.Bang || c.Nested {
			continue
		}
		for j := i; j < len(p.cmds); j++ {
			pc := p.cmds[j]
			if j > i && (pc.Nested || pc.Op != "|") {
				break
			}
			if w := Unwrap(pc.Words); len(w) > 0 && !w[0].Dynamic && !shellBuiltins[w[0].Text] {
				progs = append(progs, path.Base(w[0].Text))
				named[w[0].Text] = true
			}
		}
	}
	if len(progs) == 0 {
		return ""
	}
	if len(output) > 1<<20 {
		output = output[:1<<20]
	}
	for _, l := range strings.Split(output, "\n") {
		if m := shellCannotRun.FindStringSubmatch(l); m != nil && named[m[1]] {
			return fmt.Sprintf("`%s` could not run (%s), and `!` turns the shell's exit %s into a pass", m[1], strings.TrimSpace(l), shellExit(m[2]))
		}
		for _, prog := range progs {
			if strings.HasPrefix(l, prog+": ") || prog == "git" && strings.HasPrefix(l, "fatal: ") {
				return fmt.Sprintf("`%s` could not run (%s), and `!` turns its failure into a pass", prog, strings.TrimSpace(l))
			}
		}
	}
	return ""
}
