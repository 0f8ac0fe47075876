package gate

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
)

// TouchedBy finds the file the current task's tool calls touched for a
// plan section, for the scope gate when a section's file is not known.
func TouchedBy(st *store.Store) func(*plan.Node) string {
	return func(section *plan.Node) string {
		ctx := context.Background()
		t, err := st.LatestTask(ctx)
		if err != nil {
			return ""
		}
		evs, err := st.EventsAfter(ctx, t.ID, 0, 1<<20)
		if err != nil {
			return ""
		}
		var paths []string
		for _, e := range evs {
			if e.Kind == string(agent.KindToolCall) && e.Data != "" {
				paths = append(paths, stall.InputPaths(json.RawMessage(e.Data))...)
			}
		}
		return TouchedFile(paths, section)
	}
}

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
