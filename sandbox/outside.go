package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// What a command prints when it cannot find a path: the lines that name
// a path it tried (cat: /opt/x: No such file or directory; ls: cannot
// access '/opt/x'; ENOENT: no such file or directory, open '/opt/x').
var notFound = regexp.MustCompile(`(?i)no such file or directory|cannot access|\benoent\b|does not exist|not found|cannot find`)

// absPath is an absolute path in a line: after a space, a quote, a
// bracket or an equals sign, up to a space, a quote, a colon or a comma.
var absPath = regexp.MustCompile("(?:^|[\\s'\"`(\\[=])(/[^\\s'\"`:,;()\\[\\]]+)")

// maxOutside bounds the paths one failure names.
const maxOutside = 3

// OutsideView finds, in the output of a command that failed, the paths it
// could not reach because they are not in its view: absolute paths named
// on a line that says a path was not found, that exist on the host, and
// that inView says the run does not see. Each is named once, at most
// three, in the order of the output.
func OutsideView(output string, inView func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(output, "\n") {
		if !notFound.MatchString(line) {
			continue
		}
		for _, m := range absPath.FindAllStringSubmatch(line, -1) {
			p := filepath.Clean(strings.TrimRight(m[1], "."))
			if seen[p] || p == "/" {
				continue
			}
			seen[p] = true
			if _, err := os.Lstat(p); err != nil || inView(p) {
				continue
			}
			if out = append(out, p); len(out) == maxOutside {
				return out
			}
		}
	}
	return out
}

// OutsideViewHint is the sentence that tells the user what to do about a
// path outside the view: the field of loop.yaml that lets it in
// (sandbox.allow_sockets for a unix socket, else sandbox.allow_read).
func OutsideViewHint(path string) string {
	field := "sandbox.allow_read"
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		field = "sandbox.allow_sockets"
	}
	return path + viewHintMark + field + " in loop.yaml"
}

// OutsideViewHints are the hints for the paths a failed command's output
// names that are outside the view (see OutsideView).
func OutsideViewHints(output string, inView func(string) bool) []string {
	var out []string
	for _, p := range OutsideView(output, inView) {
		out = append(out, OutsideViewHint(p))
	}
	return out
}

// inManifestView says whether path is in a view made of m and the trees
// shown besides it, or is kept out of it on purpose (hidden: the engine's
// state, other loops), which no field of the loop file lets in.
func inManifestView(path string, m Manifest, shown, hidden []string) bool {
	if covered(path, hidden) {
		return true
	}
	if covered(path, shown) {
		return true
	}
	for _, e := range m {
		if e.How != Fresh && Within(path, e.Path) {
			return true
		}
	}
	return false
}

// InView says whether a run of p sees path (or keeps it out on purpose:
// the engine's state, hidden and masked paths): the manifest, the loop
// folder, the writable trees (HOME only where the view keeps it), the
// paths shown. With the sandbox off every path is.
func (p Policy) InView(path string) bool {
	if p.Kind == Off || p.Kind == "" {
		return true
	}
	home := ""
	if h, err := canonical(lookupEnv(p.viewEnv(), "HOME")); err == nil && h != "/" {
		home = h
	}
	shown := append([]string{p.Dir}, p.Shown...)
	for _, w := range p.Writable {
		if filepath.Clean(w) != home {
			shown = append(shown, w)
		}
	}
	hidden := append(append(append([]string(nil), p.Hidden...), p.Masked...), p.ReadOnly...)
	return inManifestView(path, p.manifest(""), shown, hidden)
}

// viewHintMark is what every hint says (OutsideViewHint).
const viewHintMark = " is outside the sandbox's view; add it to "

// ViewHintLines are the hints among text's lines (a failure signal): what
// the console prints beside a failed check.
func ViewHintLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, viewHintMark) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
