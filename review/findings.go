package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Severities, from the most serious.
var severities = []string{"critical", "major", "minor"}

// sevRank: critical 3, major 2, minor 1, unknown 0.
func sevRank(s string) int {
	switch s {
	case "critical":
		return 3
	case "major":
		return 2
	case "minor":
		return 1
	}
	return 0
}

// RecurWindow is how many lines apart two findings in the same file may be
// and still be "in the same place" (code moves as it is fixed).
const RecurWindow = 30

// FindingsSchema is the contract the reviewer's prompt carries.
const FindingsSchema = `{
  "findings": [
    {
      "id": "F-1",                 // unique in this review: F-1, F-2, ...
      "severity": "critical",      // critical | major | minor
      "file": "path/to/file.go",   // relative to this directory
      "line": 42,                  // line in the current file; 0 = the file as a whole
      "title": "one line: what is wrong",
      "detail": "why it is wrong, how it shows, what it breaks",
      "kind": "input-validation"   // a short stable category: input-validation, error-handling, race, security, missing-test, docs ...
    }
  ]
}`

// VerdictsSchema is the contract of the fix-verification pass.
const VerdictsSchema = `{
  "verdicts": [
    {"id": "F-1", "status": "closed", "detail": "why: what you read that shows it"}   // status: closed | open
  ]
}`

// extractJSON finds the JSON document in an agent's output: the whole text,
// else the last fenced json block, else the span from the first { to the
// last }.
func extractJSON(text string) []byte {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	if json.Valid([]byte(t)) {
		return []byte(t)
	}
	if ms := fencedJSON.FindAllStringSubmatch(t, -1); len(ms) > 0 {
		return []byte(strings.TrimSpace(ms[len(ms)-1][1]))
	}
	i, j := strings.Index(t, "{"), strings.LastIndex(t, "}")
	if i >= 0 && j > i {
		return []byte(t[i : j+1])
	}
	return []byte(t)
}

var fencedJSON = regexp.MustCompile("(?s)```(?:json)?\\s*\\n(.*?)\\n\\s*```")

// ParseFindings decodes and validates the reviewer's findings. Every error
// names the finding it is about.
func ParseFindings(data []byte) ([]Finding, []string) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, []string{"no findings JSON: the output file is missing or empty and the final message holds no JSON"}
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, []string{"not valid JSON: " + err.Error()}
	}
	var list []any
	switch v := raw.(type) {
	case []any:
		list = v
	case map[string]any:
		f, ok := v["findings"]
		if !ok {
			return nil, []string{`the JSON object has no "findings" array`}
		}
		if list, ok = f.([]any); !ok {
			if f != nil {
				return nil, []string{`"findings" must be an array`}
			}
		}
	default:
		return nil, []string{`the JSON must be an object {"findings": [...]}`}
	}
	var out []Finding
	var errs []string
	seen := map[string]bool{}
	for i, item := range list {
		m, ok := item.(map[string]any)
		name := fmt.Sprintf("finding %d", i+1)
		if !ok {
			errs = append(errs, name+": not an object")
			continue
		}
		str := func(key string) (string, bool) {
			v, ok := m[key]
			if !ok || v == nil {
				return "", false
			}
			s, ok := v.(string)
			return strings.TrimSpace(s), ok
		}
		var f Finding
		var ok1 bool
		if f.ID, ok1 = str("id"); !ok1 || f.ID == "" {
			errs = append(errs, name+`: "id" must be a non-empty string`)
		} else {
			name = fmt.Sprintf("finding %d (%s)", i+1, f.ID)
			if seen[f.ID] {
				errs = append(errs, name+": the id appears twice")
			}
			seen[f.ID] = true
		}
		sev, _ := str("severity")
		f.Severity = strings.ToLower(sev)
		if sevRank(f.Severity) == 0 {
			errs = append(errs, fmt.Sprintf(`%s: "severity" must be critical, major or minor, got %q`, name, sev))
		}
		if f.File, ok1 = str("file"); !ok1 || f.File == "" {
			errs = append(errs, name+`: "file" must be a non-empty string (the path the finding is about)`)
		}
		switch v := m["line"].(type) {
		case nil:
		case json.Number:
			n, err := strconv.Atoi(v.String())
			if err != nil || n < 0 {
				errs = append(errs, fmt.Sprintf(`%s: "line" must be a whole number, 0 or more, got %s`, name, v))
			}
			f.Line = n
		default:
			errs = append(errs, fmt.Sprintf(`%s: "line" must be a number, got %v`, name, v))
		}
		for _, k := range []struct {
			key string
			dst *string
		}{{"title", &f.Title}, {"detail", &f.Detail}, {"kind", &f.Kind}} {
			if *k.dst, ok1 = str(k.key); !ok1 || *k.dst == "" {
				errs = append(errs, fmt.Sprintf(`%s: %q must be a non-empty string`, name, k.key))
			}
		}
		out = append(out, f)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// ParseVerdicts decodes the fix check's verdicts: exactly one per finding.
func ParseVerdicts(data []byte, findings []Finding) ([]Verdict, []string) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, []string{"no verdicts JSON: the output file is missing or empty and the final message holds no JSON"}
	}
	var doc struct {
		Verdicts []Verdict `json:"verdicts"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, []string{"not valid JSON in the verdicts schema: " + err.Error()}
	}
	want := map[string]bool{}
	for _, f := range findings {
		want[f.ID] = true
	}
	var errs []string
	got := map[string]bool{}
	for i, v := range doc.Verdicts {
		v.Status = strings.ToLower(strings.TrimSpace(v.Status))
		doc.Verdicts[i].Status = v.Status
		switch {
		case !want[v.ID]:
			errs = append(errs, fmt.Sprintf("verdict %d: %q is not one of the findings to check", i+1, v.ID))
		case got[v.ID]:
			errs = append(errs, fmt.Sprintf("verdict %d: %s has two verdicts", i+1, v.ID))
		}
		got[v.ID] = true
		if v.Status != "closed" && v.Status != "open" {
			errs = append(errs, fmt.Sprintf(`verdict %d (%s): "status" must be closed or open, got %q`, i+1, v.ID, v.Status))
		}
	}
	for _, f := range findings {
		if !got[f.ID] {
			errs = append(errs, fmt.Sprintf("%s has no verdict", f.ID))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return doc.Verdicts, nil
}

// AtOrAbove returns the findings at or above the bar.
func AtOrAbove(fs []Finding, bar string) []Finding {
	var out []Finding
	for _, f := range fs {
		if sevRank(f.Severity) >= sevRank(bar) {
			out = append(out, f)
		}
	}
	return out
}

func sevCounts(fs []Finding) (c, m, n int) {
	for _, f := range fs {
		switch f.Severity {
		case "critical":
			c++
		case "major":
			m++
		default:
			n++
		}
	}
	return
}

func normKind(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.NewReplacer(" ", "-", "_", "-").Replace(k)
}

func normFile(f string) string {
	f = strings.TrimSpace(f)
	f = strings.TrimPrefix(f, "./")
	return path.Clean(f)
}

// samePlace: the same file, and lines within RecurWindow of each other
// (a line of 0 is the whole file).
func samePlace(a, b Finding) bool {
	if normFile(a.File) != normFile(b.File) {
		return false
	}
	if a.Line == 0 || b.Line == 0 {
		return true
	}
	d := a.Line - b.Line
	if d < 0 {
		d = -d
	}
	return d <= RecurWindow
}

// recurs: the same kind in the same place.
func recurs(a, b Finding) bool { return normKind(a.Kind) == normKind(b.Kind) && samePlace(a, b) }

// findRecurrences flags the findings of this round (at or above the bar)
// that came back: the same kind in the same place as a finding an earlier
// round sent to the fixer.
func findRecurrences(earlier []Round, now []Finding, bar string) []Recurrence {
	var out []Recurrence
	for _, f := range AtOrAbove(now, bar) {
	search:
		for i := len(earlier) - 1; i >= 0; i-- {
			r := earlier[i]
			for _, g := range r.Findings {
				if hasString(r.Sent, g.ID) && recurs(f, g) {
					out = append(out, Recurrence{ID: f.ID, Round: r.N, Of: g.ID, OfTitle: g.Title})
					break search
				}
			}
		}
	}
	return out
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// findingKey is what "the same finding" means for the same-set rule: same
// severity, kind, file and title (ids and lines may differ).
func findingKey(f Finding) string {
	title := strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(f.Title), " "), " ")
	return strings.Join([]string{f.Severity, normKind(f.Kind), normFile(f.File), title}, "|")
}

// sameSet: two non-empty sets of findings that are the same findings.
func sameSet(a, b []Finding) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	keys := func(fs []Finding) []string {
		m := map[string]bool{}
		for _, f := range fs {
			m[findingKey(f)] = true
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	ka, kb := keys(a), keys(b)
	if len(ka) != len(kb) {
		return false
	}
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}

func findingIDs(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Place is where a finding is: file:line, or the file alone.
func (f Finding) Place() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}
