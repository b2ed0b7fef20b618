package cost

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// PriceSources are the places prices come from, lowest first: the default
// table, a loop file's prices: map, a YAML prices file, then NAME=PRICE
// overrides (as `--price` gives them).
type PriceSources struct {
	Loop      map[string]Price
	File      string   // YAML: NAME: {cache_write: .., cache_read: .., output: .., input: ..}
	Overrides []string // NAME=CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT]
}

// BuildTable is the default table with the loop file's prices, then the
// prices file, then the overrides on top. An override replaces a whole
// entry; the other sources merge field by field.
func BuildTable(src PriceSources) (Table, error) {
	t := DefaultTable().Merge(src.Loop)
	if src.File != "" {
		data, err := os.ReadFile(src.File)
		if err != nil {
			return nil, fmt.Errorf("read prices file: %v", err)
		}
		var m map[string]Price
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("prices file %s: %v (want NAME: {cache_write: 5, cache_read: 0.2, output: 20})", src.File, err)
		}
		t = t.Merge(m)
	}
	extra := map[string]Price{}
	for _, s := range src.Overrides {
		name, val, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("--price %q: want NAME=CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT], e.g. opus=5,0.2,20", s)
		}
		p, err := ParsePrice(val)
		if err != nil {
			return nil, fmt.Errorf("--price %s: %v", name, err)
		}
		extra[strings.TrimSpace(name)] = p
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t[strings.ToLower(n)] = extra[n]
	}
	return t, nil
}

// Validate checks the token shape.
func (a Assumptions) Validate() error {
	if a.Prefix < 0 || a.Growth < 0 || a.OutPerTurn < 0 {
		return errors.New("--prefix, --growth and --output-tokens cannot be negative")
	}
	return nil
}

// Validate checks a review loop's roles and rounds.
func (rl ReviewLoop) Validate() error {
	for _, r := range []Role{rl.Writer, rl.Reviewer, rl.Fixer} {
		if r.Turns < 1 {
			return fmt.Errorf("--%s-turns must be at least 1", r.Name)
		}
	}
	if rl.Rounds < 0 {
		return errors.New("--rounds cannot be negative")
	}
	return nil
}

// ValidRate checks a success rate: 0 (not given) or more than 0 and at most 1.
func ValidRate(r float64) error {
	if r != 0 && !(r > 0 && r <= 1) {
		return errors.New("--success-rate must be more than 0 and at most 1, e.g. 0.6")
	}
	return nil
}

// PerTaskRates is the cost per task at each success rate: the given rate,
// or 100%, 70% and 50% when none is given.
func PerTaskRates(perAttempt, rate float64) []RatePrice {
	rates := []float64{1, 0.7, 0.5}
	if rate > 0 {
		rates = []float64{rate}
	}
	var out []RatePrice
	for _, r := range rates {
		v, _ := PerTask(perAttempt, r)
		out = append(out, RatePrice{Rate: r, USD: v})
	}
	return out
}

// RatePrice is the cost per task at one success rate.
type RatePrice struct {
	Rate float64
	USD  float64
}
