package spec

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/looprinter/looprinter/redact"
)

// Diff lists what differs between two loop files, one field a line in the
// form `budget.iterations: 10 → 20`: every field of Loop, found by
// reflection (the yaml names), values shortened. A list of words (verify,
// protect, args …) gives a line per added or removed entry (`verify: none →
// "go vet ./..."`), a map a line per key (`agents.build.timeout: 20m →
// 10m`), post phases a line per field (`post_phases[0].prompt: …`). A nil
// loop counts as an empty one.
func Diff(a, b *Loop) []string {
	var out []string
	for _, d := range fieldDiffs(a, b) {
		out = append(out, d.String())
	}
	return capLines(out)
}

// MaxLines is how many lines Diff and a Verdict's lists hold at most; a
// last line says how many more there were.
const MaxLines = 100

func capLines(lines []string) []string {
	if len(lines) <= MaxLines {
		return lines
	}
	return append(lines[:MaxLines-1:MaxLines-1], fmt.Sprintf("… and %d more", len(lines)-MaxLines+1))
}

// fieldDiff is one difference between two loop files.
type fieldDiff struct {
	Path string // where, as written in the loop file: agents.build.timeout, post_phases[0].prompt, verify
	Key  string // the rule's key: map keys and list positions are *: agents.*.timeout, post_phases.*.prompt
	// Keys are the map keys and list positions met on the way, in order
	// (for agents.build.timeout: ["build"]).
	Keys []string
	// Old and New are the values; an invalid Value is absent on that side
	// (an added map key or post phase, an added or removed list entry).
	Old, New reflect.Value
	// Whole is set for a list whose entries are the same but whose order or
	// repetitions changed: Old and New are then the whole lists. Otherwise
	// a difference in a list of words is one entry added or removed.
	Whole bool
}

func (d fieldDiff) String() string {
	return fmt.Sprintf("%s: %s → %s", d.Path, d.render(d.Old), d.render(d.New))
}

// render shows a value, masked where it may hold a secret: the notify
// URLs and command, and an agent's secret-named variables (docs/operating.md,
// "Secrets").
func (d fieldDiff) render(v reflect.Value) string {
	if v.IsValid() && v.Kind() == reflect.String && v.String() != "" {
		switch {
		case d.Key == "notify.webhook":
			return strconv.Quote(redact.URL(v.String()))
		case d.Key == "notify.command":
			return strconv.Quote(clip(redact.Command(v.String()), 80))
		case (d.Key == "agent.env.*" || d.Key == "agents.*.env.*") && redact.SecretName(d.Keys[len(d.Keys)-1]):
			return "[REDACTED:" + d.Keys[len(d.Keys)-1] + "]"
		}
	}
	return render(v)
}

func fieldDiffs(a, b *Loop) []fieldDiff {
	if a == nil {
		a = &Loop{}
	}
	if b == nil {
		b = &Loop{}
	}
	var out []fieldDiff
	walkDiff("", "", nil, reflect.ValueOf(*a), reflect.ValueOf(*b), &out)
	return out
}

// yamlName is the field's name in the loop file, "" if it has none.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || name == "" {
		return ""
	}
	return name
}

// field returns v's i-th field, or an invalid Value when v is absent.
func field(v reflect.Value, i int) reflect.Value {
	if !v.IsValid() {
		return v
	}
	return v.Field(i)
}

// walkDiff compares a and b (of type t, either may be absent) and appends
// one fieldDiff per differing leaf.
func walkDiff(path, key string, keys []string, a, b reflect.Value, out *[]fieldDiff) {
	var t reflect.Type
	switch {
	case a.IsValid():
		t = a.Type()
	case b.IsValid():
		t = b.Type()
	default:
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			name := yamlName(t.Field(i))
			if name == "" {
				continue
			}
			walkDiff(join(path, name), join(key, name), keys, field(a, i), field(b, i), out)
		}
	case reflect.Map:
		seen := map[string]bool{}
		var ks []string
		for _, v := range []reflect.Value{a, b} {
			if !v.IsValid() {
				continue
			}
			for _, k := range v.MapKeys() {
				if s := k.String(); !seen[s] {
					seen[s] = true
					ks = append(ks, s)
				}
			}
		}
		sort.Strings(ks)
		for _, k := range ks {
			walkDiff(join(path, k), join(key, "*"), append(append([]string{}, keys...), k),
				mapIndex(a, k), mapIndex(b, k), out)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			n := max(length(a), length(b))
			for i := 0; i < n; i++ {
				walkDiff(fmt.Sprintf("%s[%d]", path, i), join(key, "*"), append(append([]string{}, keys...), strconv.Itoa(i)),
					index(a, i), index(b, i), out)
			}
			return
		}
		listDiff(path, key, keys, a, b, out)
	default:
		if (!a.IsValid() && b.IsZero() || !b.IsValid() && a.IsZero()) && !zeroIsAValue[key] {
			return // an entry added or removed with this field unset
		}
		if a.IsValid() && b.IsValid() && reflect.DeepEqual(a.Interface(), b.Interface()) {
			return
		}
		*out = append(*out, fieldDiff{Path: path, Key: key, Keys: keys, Old: a, New: b})
	}
}

// zeroIsAValue are the fields whose zero, in an entry added or removed, is
// a value and not "unset": a price of 0 for a model makes its runs free
// to the cost budget.
var zeroIsAValue = map[string]bool{
	"prices.*.input": true, "prices.*.output": true, "prices.*.cache_read": true, "prices.*.cache_write": true,
}

func mapIndex(m reflect.Value, k string) reflect.Value {
	if !m.IsValid() || m.IsNil() {
		return reflect.Value{}
	}
	return m.MapIndex(reflect.ValueOf(k).Convert(m.Type().Key()))
}

func length(v reflect.Value) int {
	if !v.IsValid() {
		return 0
	}
	return v.Len()
}

func index(v reflect.Value, i int) reflect.Value {
	if !v.IsValid() || i >= v.Len() {
		return reflect.Value{}
	}
	return v.Index(i)
}

// listDiff compares two lists of words as sets: a line per entry removed
// and per entry added; when neither, but the lists differ (order,
// repetitions), one line with both whole lists. It takes linear time, so
// a loop file with a huge list cannot stall the judge.
func listDiff(path, key string, keys []string, a, b reflect.Value, out *[]fieldDiff) {
	n, m := length(a), length(b)
	if n == 0 && m == 0 {
		return
	}
	set := func(v reflect.Value, l int) map[any]bool {
		s := make(map[any]bool, l)
		for i := 0; i < l; i++ {
			s[elemKey(v.Index(i))] = true
		}
		return s
	}
	inA, inB := set(a, n), set(b, m)
	var changed bool
	done := map[any]bool{}
	for i := 0; i < n; i++ {
		if x := a.Index(i); !inB[elemKey(x)] && !done[elemKey(x)] {
			done[elemKey(x)] = true
			*out = append(*out, fieldDiff{Path: path, Key: key, Keys: keys, Old: x})
			changed = true
		}
	}
	for i := 0; i < m; i++ {
		if x := b.Index(i); !inA[elemKey(x)] && !done[elemKey(x)] {
			done[elemKey(x)] = true
			*out = append(*out, fieldDiff{Path: path, Key: key, Keys: keys, New: x})
			changed = true
		}
	}
	if !changed && !reflect.DeepEqual(a.Interface(), b.Interface()) && (n > 0 || m > 0) {
		*out = append(*out, fieldDiff{Path: path, Key: key, Keys: keys, Old: a, New: b, Whole: true})
	}
}

// elemKey is a list entry as a map key.
func elemKey(v reflect.Value) any {
	if v.Type().Comparable() {
		return v.Interface()
	}
	return fmt.Sprintf("%#v", v.Interface())
}

// render writes a value the way a loop file would, shortened: strings
// quoted, durations like 30m, lists in brackets; "none" for an absent one
// and "default" for an unset optional one.
func render(v reflect.Value) string {
	if !v.IsValid() {
		return "none"
	}
	if v.Type() == reflect.TypeOf(Duration(0)) {
		return FormatDuration(time.Duration(v.Int()))
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(clip(v.String(), 80))
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	case reflect.Pointer:
		if v.IsNil() {
			return "default"
		}
		return render(v.Elem())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = render(v.Index(i))
		}
		return "[" + clip(strings.Join(parts, ", "), 200) + "]"
	}
	// Maps and structs are walked field by field and never rendered whole;
	// this is a fallback that stays on one line.
	return clip(strings.Join(strings.Fields(fmt.Sprint(v.Interface())), " "), 80)
}

// clip shortens s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// FormatDuration writes a duration the way a loop file does: 30m, 1h30m,
// 45s, 500ms; never 30m0s.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
