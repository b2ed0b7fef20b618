// Package redact replaces secrets with [REDACTED:NAME] in everything the
// engine writes or sends: the values of environment variables whose names
// mark them secret, and well-known credential shapes (API keys, tokens,
// private key blocks, passwords in URLs). One Redactor serves strings, byte
// slices, streams (a secret split across two writes is still caught) and
// whole Go values (every string field, before they are marshalled).
//
// A nil *Redactor redacts nothing: every method passes its input through.
package redact

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// MinValue is the shortest value redacted by value: shorter ones would
// destroy ordinary text ("1", "true", "main").
const MinValue = 8

// secretWords mark a variable's name as secret (case-insensitive substring).
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// notSecret are substrings of names that contain a secret word without
// holding a secret (GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL).
var notSecret = []string{"AUTHOR"}

// SecretName says whether a variable's name marks its value as secret by
// the built-in rule: it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL or AUTH, in any case (but not AUTHOR).
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range notSecret {
		up = strings.ReplaceAll(up, w, "")
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// Shape is a well-known credential form.
type Shape struct {
	Name string
	// Re matches the credential, starting at one of its anchors; when it
	// has a group, only the first group is replaced (the rest is context:
	// "://", a host).
	Re *regexp.Regexp
	// Anchors: every match starts with one of them. Only the places where
	// an anchor occurs are tried, so text without one costs one scan.
	Anchors []string
	// Word: the match may not follow a letter, digit or underscore.
	Word bool
	// MaxLen bounds how far a match is looked for past its anchor (0: to
	// the end of the text), so that many anchors cost little each.
	MaxLen int
}

// Shapes are the built-in credential forms, in the order they are applied
// (the more specific first: an Anthropic key also looks like an OpenAI one).
var Shapes = []Shape{
	{"private_key", regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`), []string{"-----BEGIN"}, false, 0},
	{"anthropic_key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{16,}`), []string{"sk-ant-"}, false, 4096},
	{"openai_key", regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), []string{"sk-"}, true, 4096},
	{"google_api_key", regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`), []string{"AIza"}, false, 64},
	{"github_token", regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false, 4096},
	{"aws_access_key", regexp.MustCompile(`(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b`), []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"}, true, 64},
	{"slack_token", regexp.MustCompile(`xox[abposre]-[A-Za-z0-9-]{10,}`), []string{"xox"}, true, 4096},
	{"slack_webhook", regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]{8,})`), []string{"hooks.slack.com/"}, false, 4096},
	{"jwt", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), []string{"eyJ"}, true, 16384},
	{"bearer_token", regexp.MustCompile(`(?i)bearer\s+([A-Za-z0-9._~+/-]{16,}=*)`), []string{"Bearer", "bearer", "BEARER"}, true, 4096},
	{"url_credentials", regexp.MustCompile(`://([^\s/:@"'<>]+:[^\s/@"'<>]+)@`), []string{"://"}, false, 512},
}

// openKey is a private key block whose end has not been seen (cut off, or
// still to come in a stream); endKey is its end.
var (
	openKey = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
	endKey  = regexp.MustCompile(`-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`)
)

type literal struct {
	value []byte
	repl  []byte
}

type pattern struct {
	name     string
	re       *regexp.Regexp
	anchored *regexp.Regexp // re, matching only at the start: tried at each anchor
	anchors  []anchor
	maxLen   int
	word     bool
	repl     []byte
}

// Redactor replaces secrets. It is safe for concurrent use once built.
type Redactor struct {
	lits     []literal
	pats     []pattern
	maxLit   int
	names    []string // the secret variables, for Names
	extraPat int
	memo     *memo // results remembered (Memo), or nil
}

// New builds a redactor from an environment ("NAME=value" entries: the
// engine's own and every agent's), extra variable names whose values are
// secret (exact names, any case), and extra patterns (each replaced as
// [REDACTED:pattern]; only its first group when it has one).
func New(env []string, extraNames []string, extraPatterns []*regexp.Regexp) *Redactor {
	r := &Redactor{}
	extra := map[string]bool{}
	for _, n := range extraNames {
		extra[strings.ToUpper(strings.TrimSpace(n))] = true
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !(SecretName(k) || extra[strings.ToUpper(k)]) {
			continue
		}
		if r.addValue(k, v) {
			r.names = append(r.names, k)
		}
	}
	for _, h := range heldValues() {
		if r.addValue(h.name, h.value) {
			r.names = append(r.names, h.name)
		}
	}
	for _, s := range Shapes {
		p := pattern{name: s.Name, re: s.Re, anchored: anchoredRe(s.Re), word: s.Word, maxLen: s.MaxLen, repl: []byte("[REDACTED:" + s.Name + "]")}
		for _, a := range s.Anchors {
			p.anchors = append(p.anchors, newAnchor(a))
		}
		r.pats = append(r.pats, p)
	}
	for _, re := range extraPatterns {
		if re != nil {
			r.pats = append(r.pats, pattern{name: "pattern", re: re, repl: []byte("[REDACTED:pattern]")})
			r.extraPat++
		}
	}
	r.sortLits()
	return r
}

// AddValue adds one secret value under a name (a webhook's token, say).
// Values shorter than MinValue are ignored. Call it before the redactor is
// shared.
func (r *Redactor) AddValue(name, value string) {
	if r != nil && r.addValue(name, value) {
		r.sortLits()
	}
}

func (r *Redactor) addValue(name, v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < MinValue {
		return false
	}
	// A path to an existing file is where a secret is, not the secret
	// (SSH_AUTH_SOCK, XAUTHORITY): redacting it would blank out folders.
	if filepath.IsAbs(v) && !strings.ContainsAny(v, "\n") {
		if _, err := os.Lstat(v); err == nil {
			return false
		}
	}
	repl := []byte("[REDACTED:" + name + "]")
	seen := map[string]bool{}
	for _, form := range forms(v) {
		if seen[form] || len(form) < MinValue {
			continue
		}
		seen[form] = true
		r.lits = append(r.lits, literal{value: []byte(form), repl: repl})
		r.maxLit = max(r.maxLit, len(form))
	}
	return true
}

// forms are the ways a value appears in output: as it is, and escaped
// inside a JSON string (with and without HTML escaping), so that a value
// holding a quote or a backslash is caught in JSON transcripts too.
func forms(v string) []string {
	out := []string{v}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		b := bytes.TrimSpace(buf.Bytes())
		out = append(out, string(b[1:len(b)-1]))
	}
	return out
}

func (r *Redactor) sortLits() {
	// Longest first: a value inside another is replaced as part of it.
	sort.SliceStable(r.lits, func(i, j int) bool { return len(r.lits[i].value) > len(r.lits[j].value) })
}

// Names are the variables whose values are redacted, in environment order.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.names...)
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	if r.memo != nil {
		if v, ok := r.memo.get(s); ok {
			return v
		}
	}
	out := s
	if b := r.redact([]byte(s), true); b != nil {
		out = string(b)
	}
	if r.memo != nil {
		r.memo.put(s, out)
	}
	return out
}

// Bytes returns b with every secret replaced. b itself is never changed;
// when nothing is found, b is returned as it is.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(b) == 0 {
		return b
	}
	if out := r.redact(b, true); out != nil {
		return out
	}
	return b
}

// redact returns the redacted copy of b, or nil when b holds no secret.
// final says b is the whole text: a private key block that never ends is
// then redacted to the end.
func (r *Redactor) redact(b []byte, final bool) []byte {
	var out []byte
	cur := b
	for _, l := range r.lits {
		if bytes.Contains(cur, l.value) {
			cur = bytes.ReplaceAll(cur, l.value, l.repl)
			out = cur
		}
	}
	for _, p := range r.pats {
		if !p.present(cur) {
			continue
		}
		if n := p.replace(cur); n != nil {
			cur, out = n, n
		}
	}
	if final {
		if loc := openKey.FindIndex(cur); loc != nil {
			cur = append(cur[:loc[0]:loc[0]], "[REDACTED:private_key]"...)
			out = cur
		}
	}
	return out
}

func (p *pattern) present(b []byte) bool {
	if len(p.anchors) == 0 {
		return true
	}
	for _, a := range p.anchors {
		if a.index(b, 0) >= 0 {
			return true
		}
	}
	return false
}

// anchor finds a literal by its rarest byte: IndexByte skips through
// ordinary text far faster than a search for the first byte ("s" of "sk-")
// would.
type anchor struct {
	lit  []byte
	rare int // index in lit of its rarest byte
}

// common lists bytes from the most to the least frequent in agent output;
// a byte not listed counts as rarer than all of them.
const common = " etaoinsrhldcu\"mfpgwy:,.bv/-_{}[]0123456789\nkxjqz"

func newAnchor(s string) anchor {
	a := anchor{lit: []byte(s)}
	best := -1
	for i := 0; i < len(s); i++ {
		r := strings.IndexByte(common, s[i])
		if r < 0 {
			r = len(common)
		}
		if r > best {
			best, a.rare = r, i
		}
	}
	return a
}

// index is the first occurrence of the anchor in b at or after from, or -1.
func (a anchor) index(b []byte, from int) int {
	c := a.lit[a.rare]
	for pos := from + a.rare; pos < len(b); {
		j := bytes.IndexByte(b[pos:], c)
		if j < 0 {
			return -1
		}
		start := pos + j - a.rare
		if bytes.HasPrefix(b[start:], a.lit) {
			return start
		}
		pos += j + 1
	}
	return -1
}

var anchoredCache sync.Map // *regexp.Regexp → *regexp.Regexp

func anchoredRe(re *regexp.Regexp) *regexp.Regexp {
	if a, ok := anchoredCache.Load(re); ok {
		return a.(*regexp.Regexp)
	}
	a := regexp.MustCompile(`^(?:` + re.String() + `)`)
	anchoredCache.Store(re, a)
	return a
}

// matches calls fn with each match of p in b, left to right, not
// overlapping: [s, e) the whole match, [gs, ge) what to replace.
func (p *pattern) matches(b []byte, fn func(s, e, gs, ge int)) {
	emit := func(off int, loc []int) {
		s, e := off+loc[0], off+loc[1]
		gs, ge := s, e
		if len(loc) >= 4 && loc[2] >= 0 {
			gs, ge = off+loc[2], off+loc[3]
		}
		fn(s, e, gs, ge)
	}
	if p.anchored == nil {
		for _, loc := range p.re.FindAllSubmatchIndex(b, -1) {
			emit(0, loc)
		}
		return
	}
	// Each place an anchor occurs, in order; the anchored pattern is tried
	// there only.
	next := make([]int, len(p.anchors))
	for i, a := range p.anchors {
		next[i] = a.index(b, 0)
	}
	pos := 0
	for {
		at := -1
		for _, n := range next {
			if n >= 0 && (at < 0 || n < at) {
				at = n
			}
		}
		if at < 0 {
			return
		}
		if at >= pos && !(p.word && at > 0 && isWord(b[at-1])) {
			window := b[at:]
			if p.maxLen > 0 && len(window) > p.maxLen {
				window = window[:p.maxLen]
			}
			var loc []int
			if p.name == "url_credentials" {
				loc = urlCredentials(window)
			} else {
				loc = p.anchored.FindSubmatchIndex(window)
			}
			if loc != nil && loc[1] > 0 {
				emit(at, loc)
				pos = at + loc[1]
			}
		}
		for i, a := range p.anchors {
			if next[i] == at {
				next[i] = a.index(b, at+1)
			}
		}
	}
}

// urlCredentials matches url_credentials's pattern at the start of b (at
// "://") by hand: it is tried at every URL, and a loop is far cheaper than
// the regular expression there.
func urlCredentials(b []byte) []int {
	if !bytes.HasPrefix(b, []byte("://")) {
		return nil
	}
	stop := func(c byte) bool {
		return c <= ' ' || c == '/' || c == '@' || c == '"' || c == '\'' || c == '<' || c == '>'
	}
	i := 3
	for i < len(b) && !stop(b[i]) && b[i] != ':' {
		i++
	}
	if i == 3 || i >= len(b) || b[i] != ':' {
		return nil
	}
	j := i + 1
	for j < len(b) && !stop(b[j]) {
		j++
	}
	if j == i+1 || j >= len(b) || b[j] != '@' {
		return nil
	}
	return []int{0, j + 1, 3, j}
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// replace returns b with p's matches replaced, or nil when there is none.
func (p *pattern) replace(b []byte) []byte {
	var out []byte
	last := 0
	p.matches(b, func(_, _, s, e int) {
		if s < last || e <= s {
			return
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[last:s]...)
		out = append(out, p.repl...)
		last = e
	})
	if out == nil {
		return nil
	}
	return append(out, b[last:]...)
}

// spans are where secrets start and end in b, for a stream to know where it
// may cut: open says the match may go on past the end of b.
func (r *Redactor) spans(b []byte, fn func(start, end int, open bool)) {
	for _, l := range r.lits {
		for off := 0; ; {
			i := bytes.Index(b[off:], l.value)
			if i < 0 {
				break
			}
			fn(off+i, off+i+len(l.value), false)
			off += i + 1
		}
	}
	for _, p := range r.pats {
		if !p.present(b) {
			continue
		}
		p.matches(b, func(s, e, _, _ int) { fn(s, e, e == len(b)) })
	}
	for _, loc := range openKey.FindAllIndex(b, -1) {
		if endKey.FindIndex(b[loc[1]:]) == nil {
			fn(loc[0], len(b), true)
		}
	}
}

// partial is how many bytes at the end of b could be the start of a secret
// value still to come.
func (r *Redactor) partial(b []byte) int {
	longest := 0
	for _, l := range r.lits {
		k := min(len(l.value)-1, len(b))
		for ; k > longest; k-- {
			if bytes.HasSuffix(b, l.value[:k]) {
				longest = k
				break
			}
		}
	}
	return longest
}

// Hold is how many bytes a stream keeps back so that a secret value split
// across two writes is still seen whole.
func (r *Redactor) Hold() int {
	if r == nil {
		return 0
	}
	return max(r.maxLit, 4<<10)
}

// Off is a redactor that redacts nothing (redact: off).
func Off() *Redactor { return nil }
