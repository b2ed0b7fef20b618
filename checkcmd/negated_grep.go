package checkcmd

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// NegatedGrepMissing says why a negated check that passed judged nothing
// when its grep was told to keep quiet about files it cannot read (`! grep
// -qs TODO a.txt`, `--no-messages`): grep exits 2 for a file that is not
// there, printing nothing, and `!` turns that into a pass. dir is the
// folder the line ran in, read after the run; a file named by an
// expansion or a glob, or under a folder only known as the line runs, is
// not judged, nor a grep after a command other than cd. "" when every
// file it names is there.
func NegatedGrepMissing(line, dir string) string {
	p, err := parse(line, "", 0)
	if err != nil {
		return ""
	}
	for i, c := range p.cmds {
		if i > 0 && p.cmds[i-1].Name() != "cd" {
			// Only a grep the line starts with (after a cd): a command
			// before it may have made the file in the check's own view,
			// gone once it ended.
			break
		}
		if !c.Bang || c.Nested || c.Dir == Unknown {
			continue
		}
		w := Unwrap(c.Words)
		if len(w) == 0 || w[0].Dynamic {
			continue
		}
		switch path.Base(w[0].Text) {
		case "grep", "egrep", "fgrep":
		default:
			continue
		}
		for _, f := range quietGrepFiles(w[1:]) {
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, filepath.FromSlash(c.Dir), p)
			}
			if _, err := os.Lstat(p); os.IsNotExist(err) {
				return fmt.Sprintf("`%s` could not read %s (it is not there; -s keeps grep quiet about it), and `!` turns its exit 2 into a pass", quoteWords(w), f)
			}
		}
	}
	return ""
}

// quietGrepFiles are the files a grep with -s (--no-messages) reads, ""
// for a grep without it or one reading its input.
func quietGrepFiles(args []Word) []string {
	quiet, patternGiven, ended := false, false, false
	var operands []Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.Text
		switch {
		case ended || a.Dynamic || !strings.HasPrefix(t, "-") || t == "-":
			operands = append(operands, a)
		case t == "--":
			ended = true
		case t == "--no-messages":
			quiet = true
		case t == "-e" || t == "-f" || t == "--regexp" || t == "--file":
			patternGiven = true
			i++
		case strings.HasPrefix(t, "--regexp=") || strings.HasPrefix(t, "--file="):
			patternGiven = true
		case t == "-m" || t == "-A" || t == "-B" || t == "-C" || t == "-d" || t == "-D" || strings.HasPrefix(t, "--") && !strings.Contains(t, "=") && grepLongValue[t]:
			i++
		case !strings.HasPrefix(t, "--"):
			flags := t[1:]
			if j := strings.IndexAny(flags, "efmABCdD"); j >= 0 {
				// A short option with a value: the rest of the word or
				// the next one.
				if strings.ContainsRune("ef", rune(flags[j])) {
					patternGiven = true
				}
				if j == len(flags)-1 {
					i++
				}
				flags = flags[:j]
			}
			if strings.Contains(flags, "s") {
				quiet = true
			}
		}
	}
	if !quiet {
		return nil
	}
	if !patternGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	var out []string
	for _, o := range operands {
		if o.Dynamic || o.Text == "-" || o.Text == "" {
			continue
		}
		out = append(out, o.Text)
	}
	return out
}

// grepLongValue are grep's long options that take their value in the
// next word.
var grepLongValue = map[string]bool{"--max-count": true, "--after-context": true, "--before-context": true,
	"--context": true, "--directories": true, "--devices": true, "--include": true, "--exclude": true,
	"--exclude-dir": true, "--exclude-from": true, "--label": true, "--binary-files": true, "--color": false}
