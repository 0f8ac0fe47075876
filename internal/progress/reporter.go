// Package progress shows a run's progress to the person watching: one
// plain line per thing that happened, a live status line on a terminal,
// or JSON lines.
package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/plaintext"
	"github.com/ralph-harness/ralph/internal/secrets"
)

// Reporter prints a run's progress: one plain line per thing that
// happened, a live status line on a terminal, or JSON lines with --json.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	scrub *secrets.Scrubber
	json  bool
	tty   bool
	start time.Time
	// live is the status line currently shown on a terminal.
	live string
	// last is the latest progress, which the ticker redraws the live
	// line from so the elapsed time moves while the agent works.
	last engine.Progress
	stop chan struct{}
}

// New returns a Reporter writing to w, JSON lines with asJSON.
func New(w io.Writer, asJSON bool) *Reporter {
	// The agent's output may print a key the run's environment holds:
	// scrubbed before a line is cut short, and again as it is written.
	sc := secrets.ForProcess("")
	r := &Reporter{w: &closable{w: secrets.Writer(w, sc)}, scrub: sc, json: asJSON, start: time.Now()}
	if f, ok := w.(*os.File); ok && !asJSON && term.IsTerminal(int(f.Fd())) {
		r.tty = true
		r.stop = make(chan struct{})
		go r.tick()
	}
	return r
}

// tick redraws the live line every second until the run ends.
func (r *Reporter) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.live != "" {
				r.clearLive()
				r.drawLive(r.last)
			}
			r.mu.Unlock()
		}
	}
}

// Err is why the progress stopped showing, nil while it shows: a write
// that failed (ralph run | head closed the pipe). The run goes on.
func (r *Reporter) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.(*closable).err
}

// closable drops what is written once a write failed: a reader that went
// away (a closed pipe) stops the showing, never the run.
type closable struct {
	w   io.Writer
	err error
}

func (c *closable) Write(p []byte) (int, error) {
	if c.err == nil {
		if _, err := c.w.Write(p); err != nil {
			c.err = err
		}
	}
	return len(p), nil
}

// Close stops the live line's ticker.
func (r *Reporter) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		close(r.stop)
		r.stop = nil
	}
	r.clearLive()
}

// drawLive shows the status line for p. The caller holds r.mu.
func (r *Reporter) drawLive(p engine.Progress) {
	phase := p.Phase
	if p.Step != "" {
		phase += " · " + p.Step
	}
	r.live = fmt.Sprintf("── task %d · %s · iteration %d · %d tool calls · $%.2f · %s", p.Task, phase, p.Iteration, p.ToolCalls, p.CostUSD, time.Since(r.start).Round(time.Second))
	if p.Stage == engine.StageWait {
		r.live = "── " + p.Message
	}
	fmt.Fprint(r.w, "\x1b[2m"+r.live+"\x1b[0m")
}

// Report implements engine.Reporter.
func (r *Reporter) Report(p engine.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Text from the task message or the agent may carry terminal escapes
	// that would repaint the person's terminal: shown as plain text.
	p.Message = plaintext.Of(r.scrub.String(p.Message))
	if p.Event != nil {
		ev := *p.Event
		ev.Text, ev.Input = plaintext.Of(r.scrub.String(ev.Text)), json.RawMessage(r.scrub.Bytes(ev.Input))
		p.Event = &ev
	}
	if p.Outcome != nil {
		o := *p.Outcome
		o.Detail = plaintext.Of(o.Detail)
		p.Outcome = &o
	}
	if p.Stage != engine.StageEnd {
		// Harness reports carry no tool count: keep the iteration's.
		if p.ToolCalls == 0 && p.Iteration == r.last.Iteration {
			p.ToolCalls = r.last.ToolCalls
		}
		r.last = p
	}
	if r.json {
		b, _ := json.Marshal(p)
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	line := r.format(p)
	if r.tty {
		r.clearLive()
	}
	if line != "" {
		fmt.Fprintln(r.w, line)
	}
	if r.tty && p.Stage != engine.StageEnd {
		r.drawLive(p)
	}
}

// Notice shows a logged warning or error as a line of the run's progress,
// placed in the task, iteration and phase the run is at.
func (r *Reporter) Notice(level slog.Level, text string) {
	r.mu.Lock()
	p := r.last
	r.mu.Unlock()
	p.Stage, p.Message, p.Event, p.Outcome, p.Gates = engine.StageWarning, text, nil, nil, nil
	if level >= slog.LevelError {
		p.Stage = engine.StageError
	}
	p.At = time.Now()
	r.Report(p)
}

func (r *Reporter) clearLive() {
	if r.live != "" {
		fmt.Fprint(r.w, "\r\x1b[2K")
		r.live = ""
	}
}

func (r *Reporter) format(p engine.Progress) string {
	prefix := fmt.Sprintf("[%d %s]", p.Iteration, p.Phase)
	if p.Step != "" {
		prefix = fmt.Sprintf("[%d %s · %s]", p.Iteration, p.Phase, p.Step)
	}
	switch p.Stage {
	case engine.StageTask:
		return "ralph: " + p.Message
	case engine.StageIteration:
		return fmt.Sprintf("%s iteration %d", prefix, p.Iteration)
	case engine.StageAgent:
		return prefix + " " + formatEvent(p.Event)
	case engine.StageGates:
		return prefix + " gates: " + p.Message
	case engine.StageWarning, engine.StageError:
		if p.Iteration == 0 {
			return "ralph: " + string(p.Stage) + ": " + p.Message
		}
		return prefix + " " + string(p.Stage) + ": " + p.Message
	case engine.StageWait:
		if r.tty {
			return ""
		}
		// Without a terminal, show the countdown every 30 seconds only.
		if strings.HasSuffix(p.Message, "0s") || strings.HasSuffix(p.Message, " 1s") {
			return prefix + " " + p.Message
		}
		return ""
	case engine.StageEnd:
		o := p.Outcome
		return fmt.Sprintf("ralph: %s — %s (task %d, %d iterations, $%.2f, %s)", o.Reason, o.Detail, o.Task, o.Iterations, o.CostUSD, o.Elapsed.Round(time.Millisecond))
	default:
		return prefix + " " + p.Message
	}
}

// formatEvent is an agent event as a progress line shows it.
func formatEvent(e *agent.Event) string {
	switch e.Kind {
	case agent.KindToolCall:
		return "→ " + e.Tool + " " + OneLine(SummarizeInput(e.Input), 100)
	case agent.KindToolResult:
		if e.IsError {
			return "  ✗ " + OneLine(e.Text, 100)
		}
		return "  ✓ " + OneLine(e.Text, 100)
	case agent.KindText:
		return "» " + OneLine(e.Text, 120)
	case agent.KindUsage:
		if e.Usage != nil {
			return fmt.Sprintf("usage: %d in / %d out tokens, $%.4f", e.Usage.InputTokens, e.Usage.OutputTokens, e.Usage.CostUSD)
		}
	case agent.KindRateLimit:
		return "rate limited: " + OneLine(e.Text, 100)
	case agent.KindError:
		return "error: " + OneLine(e.Text, 120)
	}
	return string(e.Kind) + ": " + OneLine(e.Text, 100)
}

// SummarizeInput shows the interesting part of a tool call's input: a
// path, a command, or the JSON itself.
func SummarizeInput(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	for _, k := range []string{"path", "file_path", "filePath", "file", "pattern"} {
		if v, ok := m[k].(string); ok {
			return v
		}
	}
	for _, k := range []string{"argv", "command", "cmd"} {
		switch v := m[k].(type) {
		case []any:
			parts := make([]string, len(v))
			for i, a := range v {
				parts[i] = fmt.Sprint(a)
			}
			return strings.Join(parts, " ")
		case string:
			return v
		}
	}
	return string(raw)
}

// OneLine is s on one line (runs of white space made one space), cut to
// n bytes with an ellipsis.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(plaintext.Of(s)), " ")
	if len(s) > n {
		cut := n - 1
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never through a character
		}
		return s[:cut] + "…"
	}
	return s
}
