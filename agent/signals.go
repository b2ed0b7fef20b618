package agent

import (
	"regexp"
	"strings"
)

var (
	promiseLine = regexp.MustCompile(`^<promise>([^<>\n]{1,200})</promise>$`)
	blockedTag  = regexp.MustCompile(`<blocked>([^<>\n]{1,1000})</blocked>`)
	anyTag      = regexp.MustCompile(`<(promise|blocked)>[^<>\n]{1,1000}</(promise|blocked)>`)
	spaces      = regexp.MustCompile(`\s+`)
)

// Signals finds the exact <promise>X</promise> and <blocked>reason</blocked>
// tags in text. Only the exact tag counts: "promise: DONE", "<promise> DONE"
// with a line break, or an unclosed tag are not signals; a promise counts
// only alone on its line (white space around it allowed), so that "<promise>
// DONE</promise> not yet" or "All done. <promise>DONE</promise>" promise
// nothing. A tag the agent
// quotes from its prompt is not a signal either: a tag whose neighbouring
// word sits next to it in the prompt too ("print <promise>X</promise> on a
// line"), with or without quote marks in front, and a tag alone on its line
// that follows the same line as it does in the prompt (an echoed block). A
// tag alone on its line otherwise counts, even when the prompt shows the same
// tag alone on a line. The last tag of each kind wins.
func Signals(text, prompt string) (promise, blocked string) {
	sc := newSignalScanner(prompt)
	for _, raw := range strings.Split(text, "\n") {
		sc.line(raw)
	}
	return sc.promise, sc.blocked
}

// signalScanner applies Signals' rules one line at a time, for parsers that
// see a stream.
type signalScanner struct {
	idx              *promptIndex
	prev             string // the last non-empty line, unquoted
	promise, blocked string
}

func newSignalScanner(prompt string) *signalScanner {
	return &signalScanner{idx: newPromptIndex(prompt)}
}

func (sc *signalScanner) line(raw string) {
	line := unquote(raw)
	if line == "" {
		return
	}
	if strings.Contains(line, "<promise>") || strings.Contains(line, "<blocked>") {
		if !sc.idx.echoed(line, sc.prev) {
			// A promise is a line of its own: "<promise>DONE</promise> not
			// yet", prose before it, or a quote mark in front is no promise.
			if m := promiseLine.FindStringSubmatch(strings.TrimSpace(raw)); m != nil {
				sc.promise = strings.TrimSpace(m[1])
			}
			if m := blockedTag.FindAllStringSubmatch(line, -1); m != nil {
				sc.blocked = strings.TrimSpace(m[len(m)-1][1])
			}
		}
	}
	sc.prev = line
}

// unquote trims a line and the quote marks an agent puts in front of text it
// quotes (markdown "> ", list bullets).
func unquote(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := strings.TrimLeft(s, ">*-|")
		t = strings.TrimSpace(t)
		if t == s {
			return s
		}
		s = t
	}
}

type promptIndex struct {
	flat string            // the prompt with every run of white space made one space
	prev map[string]string // a tag-only prompt line → the non-empty line before it
}

func newPromptIndex(prompt string) *promptIndex {
	idx := &promptIndex{flat: spaces.ReplaceAllString(prompt, " "), prev: map[string]string{}}
	prev := ""
	for _, l := range strings.Split(prompt, "\n") {
		l = unquote(l)
		if l == "" {
			continue
		}
		if anyTag.ReplaceAllString(l, "") == "" && prev != "" {
			idx.prev[l] = prev
		}
		prev = l
	}
	return idx
}

// echoed tells whether a line with a tag quotes the prompt.
func (idx *promptIndex) echoed(line, prev string) bool {
	if anyTag.ReplaceAllString(line, "") == "" {
		// Only tags on the line: an echo only as part of an echoed block.
		p, ok := idx.prev[line]
		return ok && p == prev
	}
	flat := spaces.ReplaceAllString(line, " ")
	for _, loc := range anyTag.FindAllStringIndex(flat, -1) {
		tag := flat[loc[0]:loc[1]]
		if before := flat[:loc[0]]; before != "" {
			f := strings.Fields(before)
			if len(f) > 0 {
				w := f[len(f)-1]
				if strings.HasSuffix(before, " ") {
					w += " "
				}
				if strings.Contains(idx.flat, w+tag) {
					return true
				}
			}
		}
		if after := flat[loc[1]:]; after != "" {
			f := strings.Fields(after)
			if len(f) > 0 {
				w := f[0]
				if strings.HasPrefix(after, " ") {
					w = " " + w
				}
				if strings.Contains(idx.flat, tag+w) {
					return true
				}
			}
		}
	}
	return false
}
