package agent

import (
	"sort"
	"strings"
)

// DefaultPrices is the price table (USD per million tokens) used to estimate
// the cost of runs whose CLI reports none (Codex, Gemini CLI), and of Claude
// runs that ended without reporting a cost. A model is priced by its exact
// name, else by the longest entry that is a prefix of it ("gpt-5.5-codex"
// uses "gpt-5"). The loop file can override or add entries (Request.Prices).
// These are list prices at the time of writing; they are an estimate.
var DefaultPrices = map[string]Price{
	// OpenAI (Codex). Cached input is billed at the cache-read price.
	"gpt-5":              {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":         {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":         {Input: 0.05, Output: 0.4, CacheRead: 0.005},
	"gpt-5.1-codex-mini": {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-codex-mini":   {Input: 0.25, Output: 2, CacheRead: 0.025},
	"codex-mini":         {Input: 1.5, Output: 6, CacheRead: 0.375},
	"gpt-4.1":            {Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":       {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-4o":             {Input: 2.5, Output: 10, CacheRead: 1.25},
	"o3":                 {Input: 2, Output: 8, CacheRead: 0.5},
	"o4-mini":            {Input: 1.1, Output: 4.4, CacheRead: 0.275},

	// Google (Gemini CLI), prompts up to 200k tokens.
	"gemini-2.5-pro":        {Input: 1.25, Output: 10, CacheRead: 0.31},
	"gemini-2.5-flash":      {Input: 0.3, Output: 2.5, CacheRead: 0.075},
	"gemini-2.5-flash-lite": {Input: 0.1, Output: 0.4, CacheRead: 0.025},
	"gemini-3-pro":          {Input: 2, Output: 12, CacheRead: 0.2},
	"gemini-3-flash":        {Input: 0.5, Output: 3, CacheRead: 0.05},
	"gemini-2.0-flash":      {Input: 0.1, Output: 0.4, CacheRead: 0.025},

	// Anthropic (only used when Claude Code reports no cost).
	"claude-opus-4-1":  {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4-0":  {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4":    {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-sonnet":    {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku":     {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku": {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"claude-3-haiku":   {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.3},
	"opus":             {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"sonnet":           {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"haiku":            {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
}

// LookupPrice finds the price of a model: the overrides first, then the
// default table; exact name, else the longest prefix. ok is false when no
// entry fits.
func LookupPrice(model string, overrides map[string]Price) (Price, bool) {
	model = strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(model, "/"); i >= 0 { // "models/gemini-2.5-pro", "openai/gpt-5"
		model = model[i+1:]
	}
	if model == "" {
		return Price{}, false
	}
	for _, table := range []map[string]Price{overrides, DefaultPrices} {
		if len(table) == 0 {
			continue
		}
		for k, p := range table {
			if strings.ToLower(k) == model {
				return p, true
			}
		}
		keys := make([]string, 0, len(table))
		for k := range table {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
		for _, k := range keys {
			if strings.HasPrefix(model, strings.ToLower(k)) {
				return table[k], true
			}
		}
	}
	return Price{}, false
}

// EstimateCost prices a run's tokens. input counts every input token, cached
// ones included; cached is the part read from the prompt cache; cacheWrite
// the part written to it (billed at CacheWrite, or Input when that is zero).
func EstimateCost(p Price, input, cached, cacheWrite, output int64) float64 {
	fresh := input - cached - cacheWrite
	if fresh < 0 {
		fresh = 0
	}
	cw := p.CacheWrite
	if cw == 0 {
		cw = p.Input
	}
	cr := p.CacheRead
	if cr == 0 && cached > 0 {
		cr = p.Input
	}
	return (float64(fresh)*p.Input + float64(cached)*cr + float64(cacheWrite)*cw + float64(output)*p.Output) / 1e6
}

// estimateInto sets res.CostUSD from its tokens, and CostEstimated. A model
// with no price leaves the cost at zero and CostEstimated false (add the
// model to the loop file's prices to have it estimated).
func estimateInto(res *Result, model string, overrides map[string]Price) {
	p, ok := LookupPrice(model, overrides)
	if !ok {
		return
	}
	res.CostUSD = EstimateCost(p, res.InputTokens, res.CachedTokens, 0, res.OutputTokens)
	res.CostEstimated = true
}
