package redact

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// A Finding is a secret found in a file's content: its kind (the name of a
// known value's variable, or a credential shape) and the line it starts on
// (1-based). It never carries the value.
type Finding struct {
	Kind string
	Line int
}

// scanShapes are the credential forms that refuse a file outright: each is
// a credential by its form alone (PEM private keys, cloud access keys,
// tokens with a known prefix). The looser forms the redactor also blanks
// out of records (bearer headers, JWTs, user:password in URLs) are left
// out: code and tests hold them as examples.
var scanShapes = map[string]*regexp.Regexp{
	"private_key":    regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`),
	"aws_access_key": regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	"github_token":   regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`),
	"slack_token":    regexp.MustCompile(`\bxox[abposre]-[0-9]+-[A-Za-z0-9-]{10,}`),
	"anthropic_key":  regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`),
	"openai_key":     regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`),
	"google_api_key": regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),
}

// Scan looks through a file's content for the values r knows (the
// secrets of the environment, the loop file's names, the backend's login)
// and for the credential shapes of scanShapes. Findings are sorted by line;
// at most one per kind and line. A nil r scans for the shapes only.
func Scan(r *Redactor, content []byte) []Finding {
	seen := map[Finding]bool{}
	var out []Finding
	add := func(kind string, off int) {
		f := Finding{Kind: kind, Line: 1 + bytes.Count(content[:off], []byte{'\n'})}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	if r != nil {
		for _, l := range r.lits {
			kind := strings.TrimSuffix(strings.TrimPrefix(string(l.repl), "[REDACTED:"), "]")
			for from := 0; ; {
				i := bytes.Index(content[from:], l.value)
				if i < 0 {
					break
				}
				add(kind, from+i)
				from += i + len(l.value)
			}
		}
	}
	for kind, re := range scanShapes {
		for _, m := range re.FindAllIndex(content, -1) {
			if kind == "openai_key" && bytes.HasPrefix(content[m[0]:], []byte("sk-ant-")) {
				continue // an Anthropic key, found as such
			}
			add(kind, m[0])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
