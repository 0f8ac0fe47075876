package gate

import (
	"path"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
)

// sourceExts are the file types a section's source can be.
var sourceExts = map[string]bool{".tsx": true, ".jsx": true, ".ts": true, ".js": true, ".vue": true, ".svelte": true, ".astro": true}

// TouchedFile picks, from the paths the agent's tool calls touched (oldest
// first), the source file most likely to hold section: the most recent one
// whose name matches the section's recipe id or name, ignoring case,
// dashes and a "Section" suffix (features → FeatureGrid.tsx,
// FeaturesSection.tsx, features-list.jsx). It returns "" when none does.
// The scope gate falls back to it when a section has no file prop and its
// suggested file does not exist.
func TouchedFile(paths []string, section *plan.Node) string {
	var keys []string
	for _, k := range []string{section.Str("gumdrop"), section.Str("name")} {
		if k = squash(k); len(k) >= 3 {
			keys = append(keys, k, strings.TrimSuffix(k, "s"))
		}
	}
	if len(keys) == 0 {
		return ""
	}
	for i := len(paths) - 1; i >= 0; i-- {
		p := path.Clean(strings.TrimPrefix(paths[i], "./"))
		ext := path.Ext(p)
		if !sourceExts[ext] || strings.HasPrefix(p, ".ralph/") || strings.Contains(p, "node_modules/") {
			continue
		}
		base := strings.TrimSuffix(squash(strings.TrimSuffix(path.Base(p), ext)), "section")
		if len(base) < 3 {
			continue
		}
		for _, k := range keys {
			if len(k) >= 3 && (strings.Contains(base, k) || strings.Contains(k, base)) {
				return p
			}
		}
	}
	return ""
}

// squash lower-cases s and drops everything but letters and digits.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
