package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// URL masks what in a URL may be a credential: its user and password, its
// path and its query. https://hooks.example.com/T000/B000/XXX becomes
// https://hooks.example.com/…; text that is not a URL with a host is
// masked whole.
func URL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		if s == "" {
			return ""
		}
		return "…"
	}
	out := u.Scheme + "://"
	if u.User != nil {
		out += "…@"
	}
	out += u.Host
	if (u.Path != "" && u.Path != "/") || u.RawPath != "" {
		out += "/…"
	} else if u.Path == "/" {
		out += "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		out += "?…"
	}
	if u.Fragment != "" {
		out += "#…"
	}
	return out
}

var urlIn = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>|;&)]+`)

// URLs are the URLs in a text (a notify command, say).
func URLs(s string) []string { return urlIn.FindAllString(s, -1) }

// Command masks every URL in a shell command the way URL does.
func Command(s string) string { return urlIn.ReplaceAllStringFunc(s, URL) }

// AddURL adds what in a URL may be a credential (its password, its path
// and each segment of it, its query) as secret values under name, so that
// they are redacted wherever they show up, in an error message say.
func (r *Redactor) AddURL(name, raw string) {
	if r == nil {
		return
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		r.addValue(name, p)
	}
	if u.User != nil {
		r.addValue(name, u.User.Username())
	}
	if u.Path != "" && u.Path != "/" {
		r.addValue(name, u.EscapedPath())
		r.addValue(name, u.Path)
		for _, seg := range strings.Split(u.Path, "/") {
			if tokenLike(seg) {
				r.addValue(name, seg)
			}
		}
	}
	if u.RawQuery != "" {
		r.addValue(name, u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				if tokenLike(v) {
					r.addValue(name, v)
				}
			}
		}
	}
	r.sortLits()
}

// tokenLike says whether a part of a URL may be a token rather than a word
// ("services", "webhooks"): 16 characters or more, or 8 with a digit.
func tokenLike(s string) bool {
	return len(s) >= 16 || (len(s) >= MinValue && strings.ContainsAny(s, "0123456789"))
}
