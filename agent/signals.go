package agent

import (
	"regexp"
	"strings"
)

var (
	promiseTag = regexp.MustCompile(`<promise>([^<>\n]{1,200})</promise>`)
	blockedTag = regexp.MustCompile(`<blocked>([^<>\n]{1,1000})</blocked>`)
)

// Signals finds the exact <promise>X</promise> and <blocked>reason</blocked>
// tags in text. Only the exact tag counts: "promise: DONE", "<promise> DONE"
// with a line break, or an unclosed tag are not signals. Lines that appear
// verbatim in the prompt are skipped, so an agent that echoes its prompt does
// not emit the signal the prompt describes. The last tag of each kind wins.
func Signals(text, prompt string) (promise, blocked string) {
	echoed := promptLines(prompt)
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "<promise>") && !strings.Contains(line, "<blocked>") {
			continue
		}
		if echoed[strings.TrimSpace(line)] {
			continue
		}
		if m := promiseTag.FindAllStringSubmatch(line, -1); m != nil {
			promise = strings.TrimSpace(m[len(m)-1][1])
		}
		if m := blockedTag.FindAllStringSubmatch(line, -1); m != nil {
			blocked = strings.TrimSpace(m[len(m)-1][1])
		}
	}
	return promise, blocked
}

func promptLines(prompt string) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(prompt, "\n") {
		if strings.Contains(l, "<promise>") || strings.Contains(l, "<blocked>") {
			set[strings.TrimSpace(l)] = true
		}
	}
	return set
}
