// Package cost is looprinter's token-cost model (docs/cost.md): a session of N turns with prompt caching on, a
// fixed prefix S that every turn resends, a history that grows by D tokens a
// turn, and a fixed number of output tokens a turn.
//
//	writes = S + (N-1)*D
//	reads  = N*S + D*N*(N-1)/2 - writes
//	cost   = writes*cache_write + reads*cache_read + N*out*output   (prices per million tokens)
//
// A fresh session per role pays this for each role on its own turn count; one
// packed session that does all the roles in turn resends the whole history on
// every turn, so its reads grow with the square of the total turn count.
package cost

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/looprinter/looprinter/agent"
)

// Price is USD per million tokens. Input is the uncached input price; the
// cached model of this package uses CacheWrite, CacheRead and Output.
type Price struct {
	Input      float64 `yaml:"input"`
	Output     float64 `yaml:"output"`
	CacheRead  float64 `yaml:"cache_read"`
	CacheWrite float64 `yaml:"cache_write"`
}

// Assumptions are the token shape of one agent turn.
type Assumptions struct {
	Prefix     int // S: fixed prefix every turn resends (system prompt, tools, files read first)
	Growth     int // D: tokens the history grows by each turn
	OutPerTurn int // output tokens per turn
}

// DefaultAssumptions are the worked example's (docs/cost.md): S = 20,000, D = 3,000, 800 output tokens a turn.
var DefaultAssumptions = Assumptions{Prefix: 20000, Growth: 3000, OutPerTurn: 800}

// Session is the token count and cost of one session of N turns.
type Session struct {
	Turns  int
	Writes int64 // cache-write tokens
	Reads  int64 // cache-read tokens
	Output int64 // output tokens
	USD    float64
	Model  string
	Price  Price
}

// Tokens returns the cache writes, cache reads and output tokens of a session
// of n turns.
func (a Assumptions) Tokens(n int) (writes, reads, output int64) {
	if n <= 0 {
		return 0, 0, 0
	}
	N, S, D := int64(n), int64(a.Prefix), int64(a.Growth)
	writes = S + (N-1)*D
	reads = N*S + D*N*(N-1)/2 - writes
	output = N * int64(a.OutPerTurn)
	return writes, reads, output
}

// Session prices one session of n turns on a model.
func (a Assumptions) Session(model string, p Price, n int) Session {
	w, r, o := a.Tokens(n)
	usd := (float64(w)*p.CacheWrite + float64(r)*p.CacheRead + float64(o)*p.Output) / 1e6
	return Session{Turns: n, Writes: w, Reads: r, Output: o, USD: usd, Model: model, Price: p}
}

// Role is one agent role of a loop: its model and the turns of one run.
type Role struct {
	Name  string
	Model string
	Turns int
}

// ReviewLoop is the review shape: a writer, then rounds of reviewer and
// fixer, then (optionally) a reviewer pass that re-reads only the fixes.
type ReviewLoop struct {
	Writer, Reviewer, Fixer Role
	Rounds                  int
	FixCheck                bool
}

// ReviewEstimate is the price of a review loop, fresh session per role, and
// the same work packed into one session.
type ReviewEstimate struct {
	Writer, Reviewer, Fixer Session
	Rounds                  int
	FixCheck                bool
	Total                   float64 // fresh session per role
	Packed                  Session // all turns in one session on the writer's model
	PackedRatio             float64 // Packed.USD / Total
	WriteRatio              float64 // Total / Writer.USD
}

// EstimateReview prices a review loop with the given price table.
func (a Assumptions) EstimateReview(t Table, rl ReviewLoop) (ReviewEstimate, error) {
	var e ReviewEstimate
	price := func(r Role) (Session, error) {
		p, _, ok := t.Lookup(r.Model)
		if !ok {
			return Session{}, fmt.Errorf("no price for model %q of the %s: give one with --price %s=CACHE_WRITE,CACHE_READ,OUTPUT or a prices file", r.Model, r.Name, r.Model)
		}
		return a.Session(r.Model, p, r.Turns), nil
	}
	var err error
	if e.Writer, err = price(rl.Writer); err != nil {
		return e, err
	}
	if e.Reviewer, err = price(rl.Reviewer); err != nil {
		return e, err
	}
	if e.Fixer, err = price(rl.Fixer); err != nil {
		return e, err
	}
	e.Rounds, e.FixCheck = rl.Rounds, rl.FixCheck
	e.Total = e.Writer.USD + float64(rl.Rounds)*(e.Reviewer.USD+e.Fixer.USD)
	turns := rl.Writer.Turns + rl.Rounds*(rl.Reviewer.Turns+rl.Fixer.Turns)
	if rl.FixCheck {
		e.Total += e.Reviewer.USD
		turns += rl.Reviewer.Turns
	}
	e.Packed = a.Session(rl.Writer.Model, e.Writer.Price, turns)
	if e.Total > 0 {
		e.PackedRatio = e.Packed.USD / e.Total
	}
	if e.Writer.USD > 0 {
		e.WriteRatio = e.Total / e.Writer.USD
	}
	return e, nil
}

// PerTask is the rule of "Principles of AI Token Efficiency": cost per task =
// cost per attempt ÷ success rate. A rate outside (0, 1] is an error.
func PerTask(perAttempt, successRate float64) (float64, error) {
	if !(successRate > 0 && successRate <= 1) {
		return 0, fmt.Errorf("success rate must be more than 0 and at most 1 (got %g)", successRate)
	}
	return perAttempt / successRate, nil
}

// Table maps model names to prices.
type Table map[string]Price

// SeedTable holds the worked example's prices (docs/cost.md; USD per
// million tokens): Opus 5.5 cache write $5, Sonnet 5.5 cache write $2.5,
// cache read $0.20 for both, output $20 and $10. The example gives no
// uncached input price; Input is set to the
// cache write price, which is what an uncached prefix costs in the model.
func SeedTable() Table {
	return Table{
		"opus":   {Input: 5, CacheWrite: 5, CacheRead: 0.20, Output: 20},
		"sonnet": {Input: 2.5, CacheWrite: 2.5, CacheRead: 0.20, Output: 10},
	}
}

// DefaultTable is the worked example's table for opus and sonnet, and looprinter's
// list prices (agent.DefaultPrices, the table the engine prices finished
// runs with) for the other models: OpenAI, Google, Claude Haiku. A model
// named like an Opus or Sonnet model uses the example's price, so that the
// estimate and the worked example agree. Where a list price has no
// cache write price, writing the cache costs the input price.
func DefaultTable() Table {
	t := Table{}
	for k, p := range agent.DefaultPrices {
		k = strings.ToLower(k)
		if strings.Contains(k, "opus") || strings.Contains(k, "sonnet") {
			continue
		}
		if p.CacheWrite == 0 {
			p.CacheWrite = p.Input
		}
		if p.CacheRead == 0 {
			p.CacheRead = p.Input
		}
		t[k] = Price(p)
	}
	for k, p := range SeedTable() {
		t[k] = p
	}
	return t
}

// Merge returns t with the entries of o on top; a zero field in o keeps t's.
func (t Table) Merge(o map[string]Price) Table {
	out := Table{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range o {
		base := out[strings.ToLower(k)]
		if v.Input != 0 {
			base.Input = v.Input
		}
		if v.Output != 0 {
			base.Output = v.Output
		}
		if v.CacheRead != 0 {
			base.CacheRead = v.CacheRead
		}
		if v.CacheWrite != 0 {
			base.CacheWrite = v.CacheWrite
		}
		out[strings.ToLower(k)] = base
	}
	return out
}

// Lookup finds a model's price: the exact name, then the longest table key
// contained in the name (so "claude-opus-5-5" finds "opus"). It returns the
// key that matched.
func (t Table) Lookup(model string) (Price, string, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if p, ok := t[m]; ok {
		return p, m, true
	}
	var keys []string
	for k := range t {
		if k != "" && strings.Contains(m, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return Price{}, "", false
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return t[keys[0]], keys[0], true
}

// ParsePrice reads "CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT]" in USD per
// million tokens.
func ParsePrice(s string) (Price, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 3 || len(parts) > 4 {
		return Price{}, fmt.Errorf("price %q: want CACHE_WRITE,CACHE_READ,OUTPUT[,INPUT] in USD per million tokens, e.g. 5,0.2,20", s)
	}
	var v [4]float64
	for i, p := range parts {
		var f float64
		if _, err := fmt.Sscan(strings.TrimSpace(p), &f); err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return Price{}, fmt.Errorf("price %q: %q is not a price", s, p)
		}
		v[i] = f
	}
	pr := Price{CacheWrite: v[0], CacheRead: v[1], Output: v[2], Input: v[3]}
	if len(parts) == 3 {
		pr.Input = pr.CacheWrite
	}
	return pr, nil
}

// USD formats dollars with four decimals.
func USD(v float64) string { return fmt.Sprintf("$%.4f", v) }
