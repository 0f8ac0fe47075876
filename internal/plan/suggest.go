package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Suggest returns up to n candidates nearest to word by edit distance
// (ignoring case), nearest first. A candidate that contains word, or is
// contained in it, counts as near. Candidates too far away to be a likely
// typo are left out.
func Suggest(word string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	w := strings.ToLower(word)
	limit := max(2, len(w)/3)
	var near []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(w, lc)
		if d > limit && len(w) >= 3 && len(lc) >= 3 && (strings.Contains(lc, w) || strings.Contains(w, lc)) {
			d = limit
		}
		if d <= limit {
			near = append(near, scored{c, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.s, b.s)
	})
	out := make([]string, 0, min(n, len(near)))
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.s)
	}
	return out
}

// didYouMean formats suggestions as ` (did you mean "a" or "b"?)`, or ""
// when there are none.
func didYouMean(word string, candidates []string) string {
	s := Suggest(word, candidates, 3)
	if len(s) == 0 {
		return ""
	}
	q := make([]string, len(s))
	for i, c := range s {
		q[i] = fmt.Sprintf("%q", c)
	}
	return " (did you mean " + strings.Join(q, " or ") + "?)"
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		// Long words are never typos of short ids; skip the quadratic work.
		if a == b {
			return 0
		}
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
