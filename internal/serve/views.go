package serve

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/plaintext"
	"github.com/ralph-harness/ralph/internal/store"
)

//go:embed templates/*.html static/*
var assets embed.FS

// pageNames are the templates that are whole pages; each is parsed with
// the layout and the shared partials.
var pageNames = []string{"overview", "events", "gates", "plan", "approvals", "snapshots", "snapshot", "file", "rollback", "specs", "log", "error", "remote", "iteration", "preview"}

func parseTemplates() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

var funcs = template.FuncMap{
	"ago":      ago,
	"clock":    func(t time.Time) string { return t.Local().Format("15:04:05") },
	"datetime": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"usd":      func(f float64) string { return fmt.Sprintf("$%.4f", f) },
	"short":    func(s string, n int) string { return trimOneLine(s, n) },
	"long":     func(s string) bool { return len(s) > 240 || strings.Count(s, "\n") > 4 },
	"explain":  explain,
	"add":      func(a, b int) int { return a + b },
	"tokens":   humanCount,
	// headline and details split a request's prompt: its first line, and
	// the rest (a <Human>'s text, the diff of a protected file) as it is.
	"headline": func(s string) string { h, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return h },
	"details": func(s string) string {
		_, d, _ := strings.Cut(strings.TrimSpace(s), "\n")
		return strings.Trim(d, "\n")
	},
	// unverified: a completion no gate of the project's own checked
	// (the engine opens its detail with "unverified:").
	"unverified": func(reason, detail string) bool {
		return reason == "completed" && strings.HasPrefix(detail, "unverified:")
	},
}

// trimOneLine folds s to one line of at most n bytes.
func trimOneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n - 1
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return time.Since(t).Round(time.Second).String()
}

func humanCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// reasons explain, in a line, why a task ended (SPEC §4).
var reasons = map[string]string{
	"completed":           "The plan validated and every quality gate passed.",
	"max-iterations":      "The task used every iteration it was allowed (--max-iterations).",
	"max-duration":        "The task ran for the longest time it was allowed (--timeout).",
	"max-cost":            "The task spent the most it was allowed (--max-cost).",
	"gate-failures":       "The quality gates kept failing; feedback.md says what they want.",
	"stalled":             "The agent made no progress and recovery did not help.",
	"stopped":             "Someone asked the run to stop (ralph stop, or the Stop button).",
	"rejected":            "A human rejected a <Human> request the plan made.",
	"agent-error":         "The agent failed in a way retrying did not fix.",
	"interrupted":         "The process ended before the task did; `ralph resume` continues it.",
	"needs-clarification": "The task was too unclear to start; answer the question and run again.",
	"protected-changed":   "The agent changed files the gates depend on, and [guard] on_change = \"fail\" ends the run for that.",
	"state-lost":          ".ralph/ was deleted while the task ran; ralph wrote its store back, and ralph resume continues.",
}

func explain(reason string) string { return reasons[reason] }

// eventRow is an event as the pages show it.
type eventRow struct {
	store.Event
	Harness bool
	// Input is a tool call's input, indented; Compact is it on one line
	// when that is short.
	Input   string
	Compact string
	// Summary is the one-line form.
	Summary string
	// ResetAt is when a rate-limit wait ends.
	ResetAt time.Time
}

// eventView returns e as the pages show it, scrubbed of secrets before
// any of it is cut short (a key cut short no longer matches).
func (s *Server) eventView(e store.Event) eventRow {
	e.Tool, e.Text, e.Data = s.scrub.String(e.Tool), s.scrub.String(e.Text), s.scrub.String(e.Data)
	e.Text = plaintext.Of(e.Text)
	row := eventRow{Event: e, Harness: e.Source == store.SourceHarness}
	if e.Data != "" && json.Valid([]byte(e.Data)) {
		row.Input = readableJSON(e.Data, "  ")
		if c := readableJSON(e.Data, ""); len(c) <= 160 {
			row.Compact = c
		}
		var rl struct {
			ResetAt time.Time `json:"reset_at"`
		}
		if json.Unmarshal([]byte(e.Data), &rl) == nil {
			row.ResetAt = rl.ResetAt
		}
	}
	switch e.Kind {
	case "tool_call":
		data := e.Data
		if row.Input != "" {
			data = readableJSON(e.Data, "")
		}
		row.Summary = e.Tool + " " + trimOneLine(data, 160)
	default:
		row.Summary = trimOneLine(e.Text, 200)
	}
	return row
}

// readableJSON returns data (valid JSON) indented with indent, or on one
// line when indent is "", with its keys in their order and its strings as
// the text they are: Go's encoder writes <, > and & as \u003c…, which a
// person cannot read (the page escapes them for HTML itself).
func readableJSON(data, indent string) string {
	var b bytes.Buffer
	var err error
	if indent == "" {
		err = json.Compact(&b, []byte(data))
	} else {
		err = json.Indent(&b, []byte(data), "", indent)
	}
	if err != nil {
		return data
	}
	return unescapeHTML(b.String())
}

// htmlEscapes are the escapes Go's JSON encoder writes for HTML's sake.
var htmlEscapes = map[string]string{`u003c`: "<", `u003e`: ">", `u0026`: "&"}

// unescapeHTML turns \u003c, \u003e and \u0026 back into the characters,
// where the backslash starts an escape (an odd run of backslashes).
func unescapeHTML(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		run := j - i
		if c, ok := htmlEscapes[s[j:min(j+5, len(s))]]; ok && run%2 == 1 {
			b.WriteString(s[i : j-1])
			b.WriteString(c)
			i = j + 5
			continue
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// bar is one iteration in the overview's chart.
type bar struct {
	Number       int
	X, Y, W, H   float64
	Label        string
	CostUSD      float64
	Tokens       int64
	Outcome      string
	ToolCalls    int
	ChartHeight  float64
	LabelY       float64
	Phase        string
	InputTokens  int64
	OutputTokens int64
}

// chart lays out one bar per iteration, scaled by cost when there is any
// and by tokens otherwise.
func chart(its []store.Iteration) (bars []bar, byCost bool) {
	const height, width = 60.0, 300.0
	for _, it := range its {
		if it.CostUSD > 0 {
			byCost = true
		}
	}
	var max float64
	val := func(it store.Iteration) float64 {
		if byCost {
			return it.CostUSD
		}
		return float64(it.InputTokens + it.OutputTokens)
	}
	for _, it := range its {
		max = math.Max(max, val(it))
	}
	if len(its) == 0 || max == 0 {
		return nil, byCost
	}
	w := width / float64(len(its))
	for i, it := range its {
		h := 1.0
		if max > 0 {
			h = math.Max(1, val(it)/max*height)
		}
		bars = append(bars, bar{
			Number: it.Number, X: float64(i)*w + 1, W: math.Max(1, w-2), H: h, Y: height - h,
			CostUSD: it.CostUSD, Tokens: it.InputTokens + it.OutputTokens, Outcome: it.Outcome,
			ToolCalls: it.ToolCalls, Phase: it.Phase, InputTokens: it.InputTokens, OutputTokens: it.OutputTokens,
		})
	}
	return bars, byCost
}

var _ fs.FS = assets
