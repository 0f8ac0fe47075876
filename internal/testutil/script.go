package testutil

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Op is what a scripted tool call means to do.
type Op int

// Tool call intents.
const (
	// OpWrite writes Content to Path.
	OpWrite Op = iota + 1
	// OpShell runs Argv.
	OpShell
	// OpRaw calls the tool named Tool with Input as it is.
	OpRaw
)

// Call is one tool call of a scripted turn.
type Call struct {
	Op      Op
	Path    string
	Content string
	Argv    []string
	Tool    string
	Input   map[string]any
}

// Turn is one scripted model reply.
type Turn struct {
	// Text is assistant text, sent before any tool calls.
	Text string
	// Calls are tool calls; a turn with calls ends with stop reason
	// tool_use (Anthropic) or function calls (OpenAI).
	Calls []Call
	// Status, when non-zero, answers the request with this HTTP error
	// status instead (429 rate limited, 529 overloaded, 500 …).
	Status int
	// RetryAfter is the retry-after header of an error answer.
	RetryAfter string
	// Message is the error message of an error answer or a failed turn.
	Message string
	// Failed makes the turn fail in the stream: an Anthropic SSE error
	// event, an OpenAI response.failed event.
	Failed bool
	// Code is the error code of a failed OpenAI turn (default
	// "server_error").
	Code string
	// Repeat is how many requests this turn answers: 0 or 1 once, -1
	// every request from here on.
	Repeat int
	// InputTokens and OutputTokens are the usage reported (defaults 100
	// and 20).
	InputTokens, OutputTokens int64
}

// Text returns a turn that answers with text only.
func Text(s string) Turn { return Turn{Text: s} }

// WriteFile returns a call that writes content to path. Claude Code's
// Write tool wants an absolute path.
func WriteFile(path, content string) Call {
	return Call{Op: OpWrite, Path: path, Content: content}
}

// Shell returns a call that runs argv.
func Shell(argv ...string) Call { return Call{Op: OpShell, Argv: argv} }

// RawCall returns a call of the named tool with input as it is.
func RawCall(tool string, input map[string]any) Call {
	return Call{Op: OpRaw, Tool: tool, Input: input}
}

// Calls returns a turn that makes the calls, with optional text before them.
func Calls(text string, calls ...Call) Turn { return Turn{Text: text, Calls: calls} }

// RateLimited returns a turn answering HTTP 429 with the given retry-after
// header to every request from here on.
func RateLimited(retryAfter, message string) Turn {
	return Turn{Status: 429, RetryAfter: retryAfter, Message: message, Repeat: -1}
}

// Tool is a tool a request offered.
type Tool struct {
	Name string
	// Custom marks a free-form (grammar) tool whose input is a string
	// (OpenAI "custom" tools, such as Codex's apply_patch).
	Custom bool
	// Schema is the JSON schema of the tool's input, when it has one.
	Schema map[string]any
}

// ToolUse is a tool call mapped onto an offered tool.
type ToolUse struct {
	Name string
	// Input is the JSON input of a function tool.
	Input json.RawMessage
	// Text is the input of a custom (free-form) tool.
	Text string
	// Custom marks a call of a custom tool.
	Custom bool
}

// script hands out turns in order.
type script struct {
	mu    sync.Mutex
	turns []Turn
	used  int // requests answered by turns[0]
}

func (s *script) next() (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		return Turn{}, false
	}
	t := s.turns[0]
	s.used++
	if t.Repeat >= 0 && s.used >= max(t.Repeat, 1) {
		s.turns = s.turns[1:]
		s.used = 0
	}
	return t, true
}

func (s *script) push(turns []Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

func (s *script) remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// MapCall maps c onto one of the offered tools.
func MapCall(c Call, tools []Tool) (ToolUse, error) {
	switch c.Op {
	case OpRaw:
		b, err := json.Marshal(c.Input)
		if err != nil {
			return ToolUse{}, err
		}
		return ToolUse{Name: c.Tool, Input: b}, nil
	case OpWrite:
		return mapWrite(c, tools)
	case OpShell:
		return mapShell(c.Argv, tools)
	}
	return ToolUse{}, fmt.Errorf("unknown call op %d", c.Op)
}

var (
	writeTools = []string{"Write", "write_file", "write", "create_file", "create"}
	shellTools = []string{"Bash", "shell", "exec_command", "shell_command", "local_shell", "run_shell_command", "bash"}
)

func findTool(tools []Tool, names []string) (Tool, bool) {
	for _, n := range names {
		for _, t := range tools {
			if t.Name == n {
				return t, true
			}
		}
	}
	return Tool{}, false
}

func props(t Tool) map[string]any {
	p, _ := t.Schema["properties"].(map[string]any)
	return p
}

func hasProp(t Tool, name string) bool {
	_, ok := props(t)[name]
	return ok
}

func propType(t Tool, name string) string {
	p, _ := props(t)[name].(map[string]any)
	s, _ := p["type"].(string)
	return s
}

func mapWrite(c Call, tools []Tool) (ToolUse, error) {
	if t, ok := findTool(tools, writeTools); ok {
		in := map[string]any{"content": c.Content}
		if hasProp(t, "file_text") { // Copilot CLI's create{path, file_text}
			in = map[string]any{"file_text": c.Content}
		}
		switch {
		case hasProp(t, "file_path"):
			in["file_path"] = c.Path
		case hasProp(t, "filePath"):
			in["filePath"] = c.Path
		default:
			in["path"] = c.Path
		}
		return marshalUse(t.Name, in)
	}
	if t, ok := findTool(tools, []string{"apply_patch"}); ok {
		var b strings.Builder
		b.WriteString("*** Begin Patch\n*** Add File: " + c.Path + "\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(c.Content, "\n"), "\n") {
			b.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
		}
		b.WriteString("*** End Patch\n")
		if t.Custom {
			return ToolUse{Name: t.Name, Text: b.String(), Custom: true}, nil
		}
		return marshalUse(t.Name, map[string]any{"input": b.String()})
	}
	return mapShell([]string{"sh", "-c", `printf '%s' "$1" > "$0"`, c.Path, c.Content}, tools)
}

func mapShell(argv []string, tools []Tool) (ToolUse, error) {
	t, ok := findTool(tools, shellTools)
	if !ok {
		return ToolUse{}, fmt.Errorf("no shell tool among %v", toolNames(tools))
	}
	line := ShellQuote(argv)
	switch {
	case t.Name == "exec_command" || hasProp(t, "cmd"):
		return marshalUse(t.Name, map[string]any{"cmd": line})
	case propType(t, "command") == "array":
		return marshalUse(t.Name, map[string]any{"command": argv})
	case t.Name == "Bash" || t.Name == "bash":
		return marshalUse(t.Name, map[string]any{"command": line, "description": "Run a command"})
	default:
		return marshalUse(t.Name, map[string]any{"command": line})
	}
}

func marshalUse(name string, in map[string]any) (ToolUse, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return ToolUse{}, err
	}
	return ToolUse{Name: name, Input: b}, nil
}

func toolNames(tools []Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// ShellQuote joins argv into a POSIX shell command line.
func ShellQuote(argv []string) string {
	var parts []string
	for _, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' ||
				r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			parts = append(parts, a)
			continue
		}
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}
