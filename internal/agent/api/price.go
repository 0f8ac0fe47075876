package api

import (
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
)

// price is a model's list price in US dollars per million tokens.
type price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// prices are the published list prices of the models ralph knows, by
// model id prefix (the longest matching prefix wins, so dated ids such as
// claude-sonnet-4-5-20250929 match their family). Unknown models cost 0:
// ralph then reports tokens but no cost. Prices change; this table is a
// convenience for the --max-cost limit, not a bill.
var prices = map[string]price{
	// Anthropic: cache reads are 0.1× input, 5-minute cache writes 1.25×.
	"claude-opus-4-0":        {15, 75, 1.5, 18.75},
	"claude-opus-4-20250514": {15, 75, 1.5, 18.75},
	"claude-opus-4-1":        {15, 75, 1.5, 18.75},
	"claude-opus-4-5":        {5, 25, 0.5, 6.25},
	"claude-opus-4-6":        {5, 25, 0.5, 6.25},
	"claude-sonnet-4":        {3, 15, 0.3, 3.75},
	"claude-haiku-4-5":       {1, 5, 0.1, 1.25},
	"claude-3-7-sonnet":      {3, 15, 0.3, 3.75},
	"claude-3-5-sonnet":      {3, 15, 0.3, 3.75},
	"claude-3-5-haiku":       {0.8, 4, 0.08, 1},
	// OpenAI: cached input as listed; no cache-write charge.
	"gpt-4.1":      {2, 8, 0.5, 0},
	"gpt-4.1-mini": {0.4, 1.6, 0.1, 0},
	"gpt-4.1-nano": {0.1, 0.4, 0.025, 0},
	"gpt-4o":       {2.5, 10, 1.25, 0},
	"gpt-4o-mini":  {0.15, 0.6, 0.075, 0},
	"gpt-5":        {1.25, 10, 0.125, 0},
	"gpt-5-mini":   {0.25, 2, 0.025, 0},
	"gpt-5-nano":   {0.05, 0.4, 0.005, 0},
	"o3":           {2, 8, 0.5, 0},
	"o4-mini":      {1.1, 4.4, 0.275, 0},
}

// priceOf returns the price of model, and false when it is not known.
func priceOf(model string) (price, bool) {
	best, found := "", false
	for prefix := range prices {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			// A prefix must end at a boundary: gpt-4.1 must not price gpt-4.10.
			if rest := model[len(prefix):]; rest == "" || rest[0] == '-' || rest[0] == '@' || rest[0] == ':' {
				best, found = prefix, true
			}
		}
	}
	return prices[best], found
}

// cost is what u costs on model, 0 for an unknown model.
func cost(model string, u agent.Usage) float64 {
	p, ok := priceOf(model)
	if !ok {
		return 0
	}
	return (float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}
