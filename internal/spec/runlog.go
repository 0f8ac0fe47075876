package spec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
)

// Run log names in runs/<spec_id>/<timestamp>/.
const (
	VerifyLog = "verify.log"
)

// PlanLog names the log of planner attempt n.
func PlanLog(n int) string { return fmt.Sprintf("plan-attempt-%d.log", n) }

// ImplLog names the log of implementation attempt n.
func ImplLog(n int) string { return fmt.Sprintf("impl-attempt-%d.log", n) }

// runDir returns a fresh runs/<spec_id>/<timestamp>/ under base (the
// directory is created when the first log is opened).
func runDir(base string, s Spec, now time.Time) string {
	dir := filepath.Join(base, "runs", filepath.FromSlash(s.ID), now.UTC().Format("20060102T150405Z"))
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return dir
		}
		dir = filepath.Join(base, "runs", filepath.FromSlash(s.ID), fmt.Sprintf("%s-%d", now.UTC().Format("20060102T150405Z"), i))
	}
}

// runLog is one agent call's full output, appended to a log file.
type runLog struct {
	f   *os.File
	err error
}

func openRunLog(path, title string, req agent.Request) (*runLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	l := &runLog{f: f}
	l.printf("=== %s — %s\n\n--- system prompt ---\n%s\n\n--- prompt ---\n%s\n\n--- output ---\n",
		title, time.Now().UTC().Format(time.RFC3339), strings.TrimSpace(req.System), strings.TrimSpace(req.Prompt))
	return l, l.err
}

func (l *runLog) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.f, format, args...)
	}
}

// event writes one agent event.
func (l *runLog) event(e agent.Event) {
	switch e.Kind {
	case agent.KindToolCall:
		l.printf("[tool_call %s] %s\n", e.Tool, e.Input)
	case agent.KindToolResult:
		mark := ""
		if e.IsError {
			mark = " error"
		}
		l.printf("[tool_result %s%s] %s\n", e.Tool, mark, strings.TrimRight(e.Text, "\n"))
	case agent.KindUsage:
		u, _ := json.Marshal(e.Usage)
		l.printf("[usage] %s\n", u)
	default:
		l.printf("[%s] %s\n", e.Kind, strings.TrimRight(e.Text, "\n"))
	}
}

// close writes the final message and the outcome, and closes the file.
func (l *runLog) close(res agent.Result, outcome string) error {
	l.printf("\n--- final message ---\n%s\n\n--- outcome ---\n%s (tool calls %d, cost $%.4f)\n\n",
		strings.TrimSpace(res.Final), outcome, res.ToolCalls, res.Usage.CostUSD)
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	return l.err
}
