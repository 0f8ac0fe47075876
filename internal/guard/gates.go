package guard

import (
	"fmt"
	"slices"
	"time"
)

// Weakened names each gate of before that now is gone or checks less: a
// gate removed, one that runs another command or in another directory,
// one made optional or given a shorter timeout. A gate added is no
// weakening.
func Weakened(before, now []CommandGate) []string {
	var out []string
	for _, b := range before {
		i := slices.IndexFunc(now, func(n CommandGate) bool { return n.Name == b.Name })
		if i < 0 {
			out = append(out, b.Name+" (removed)")
			continue
		}
		n := now[i]
		switch {
		case !slices.Equal(b.Argv, n.Argv) || b.Dir != n.Dir:
			out = append(out, b.Name+" (runs something else)")
		case n.Optional && !b.Optional:
			out = append(out, b.Name+" (made optional)")
		case shorter(n.Timeout, b.Timeout):
			out = append(out, fmt.Sprintf("%s (timeout %s, was %s)", b.Name, n.Timeout, b.Timeout))
		}
	}
	return out
}

// shorter reports whether timeout a is a tighter bound than b ("" is the
// default, taken as no bound here).
func shorter(a, b string) bool {
	if a == "" {
		return false
	}
	da, err1 := time.ParseDuration(a)
	if b == "" {
		return err1 == nil && da > 0
	}
	db, err2 := time.ParseDuration(b)
	return err1 == nil && err2 == nil && da < db
}
