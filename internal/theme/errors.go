package theme

import (
	"fmt"
	"strings"
)

// UnknownNameError reports a name that is not in one of the registries.
type UnknownNameError struct {
	Kind  string   // "preset", "pattern", "mood", "font", "shadow profile" or "radius"
	Name  string   // what the caller asked for
	Valid []string // every name the registry holds
}

func (e *UnknownNameError) Error() string {
	return fmt.Sprintf("unknown %s %q (valid: %s)", e.Kind, e.Name, strings.Join(e.Valid, ", "))
}

func unknown(kind, name string, valid []string) error {
	return &UnknownNameError{Kind: kind, Name: name, Valid: valid}
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

// sameName compares registry names ignoring case, '-', '_' and spaces.
func sameName(a, b string) bool {
	return fold(a) == fold(b)
}

func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
