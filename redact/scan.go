package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
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
// and for the credential shapes of scanShapes, in the content as written
// and in every run of base64 (standard or URL alphabet, 24 characters or
// more) and of hex (32 digits or more) decoded, once. Findings are sorted
// by line; at most one per kind and line. A nil r scans for the shapes
// only. It is a net for accidents, not a boundary: a value split in
// pieces, encrypted, compressed or encoded twice is not found.
func Scan(r *Redactor, content []byte) []Finding {
	seen := map[Finding]bool{}
	var out []Finding
	lineOf := func(off int) int { return 1 + bytes.Count(content[:off], []byte{'\n'}) }
	add := func(kind string, line int) {
		f := Finding{Kind: kind, Line: line}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	scanBytes(r, content, func(kind string, off int) { add(kind, lineOf(off)) })
	for _, run := range encodedRuns(content) {
		line := lineOf(run.off)
		for _, dec := range run.decoded {
			scanBytes(r, dec, func(kind string, _ int) { add(kind, line) })
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

// ScanName is Scan of a file's name (its path in the change): a secret
// in a name is found like one in a file.
func ScanName(r *Redactor, name string) []Finding {
	return Scan(r, []byte(name))
}

// scanBytes calls found for each known value and credential shape in b,
// with its offset.
func scanBytes(r *Redactor, b []byte, found func(kind string, off int)) {
	if r != nil {
		for _, l := range r.lits {
			kind := strings.TrimSuffix(strings.TrimPrefix(string(l.repl), "[REDACTED:"), "]")
			for from := 0; ; {
				i := bytes.Index(b[from:], l.value)
				if i < 0 {
					break
				}
				found(kind, from+i)
				from += i + len(l.value)
			}
		}
	}
	for kind, re := range scanShapes {
		for _, m := range re.FindAllIndex(b, -1) {
			if kind == "openai_key" && bytes.HasPrefix(b[m[0]:], []byte("sk-ant-")) {
				continue // an Anthropic key, found as such
			}
			found(kind, m[0])
		}
	}
}

var (
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{24,}={0,2}`)
	hexRun    = regexp.MustCompile(`(?:[0-9a-fA-F]{2}){16,}`)
)

// encoded is a run of base64 or hex in a file and what it decodes to.
type encoded struct {
	off     int
	decoded [][]byte
}

// encodedRuns decodes the base64 and hex runs of content (base64 from each
// of its first four characters, so that a run glued to a word still
// decodes).
func encodedRuns(content []byte) []encoded {
	var out []encoded
	for _, m := range hexRun.FindAllIndex(content, -1) {
		if d, err := hex.DecodeString(string(content[m[0]:m[1]])); err == nil {
			out = append(out, encoded{off: m[0], decoded: [][]byte{d}})
		}
	}
	for _, m := range base64Run.FindAllIndex(content, -1) {
		run := strings.TrimRight(string(content[m[0]:m[1]]), "=")
		run = strings.NewReplacer("-", "+", "_", "/").Replace(run)
		e := encoded{off: m[0]}
		for k := 0; k < 4 && k < len(run); k++ {
			part := run[k:]
			part = part[:len(part)/4*4+len(part)%4*btoi(len(part)%4 != 1)]
			buf := make([]byte, base64.RawStdEncoding.DecodedLen(len(part)))
			n, _ := base64.RawStdEncoding.Decode(buf, []byte(part))
			if n > 0 {
				e.decoded = append(e.decoded, buf[:n])
			}
		}
		out = append(out, e)
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
