package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

// Tool limits. They keep one tool result small enough for the context
// window; each cut says so in the result.
const (
	// MaxReadBytes is the largest file read_file, edit_file and grep open.
	MaxReadBytes = 1 << 20
	// maxReadLines is how many lines read_file shows without a range.
	maxReadLines = 2000
	// maxLineChars cuts very long lines in read_file and grep output.
	maxLineChars = 2000
	// maxListEntries caps list_files.
	maxListEntries = 1000
	// maxGrepMatches caps grep.
	maxGrepMatches = 200
	// maxRunOutput caps the output run returns: the head and the tail
	// are kept, the middle is cut.
	maxRunOutput = 32 << 10
	// DefaultRunTimeout is the run tool's timeout when neither the call
	// nor Config.RunTimeout sets one.
	DefaultRunTimeout = 2 * time.Minute
	// MaxRunTimeout is the longest a run call may take.
	MaxRunTimeout = 10 * time.Minute
)

// planFile is the plan plan_validate checks, relative to the workspace.
const planFile = ".ralph/plan.tsx"

// toolDef is a tool as offered to the model.
type toolDef struct {
	Name        string
	Description string
	// Properties and Required make the input's JSON schema, an object.
	Properties map[string]any
	Required   []string
}

// schema returns the tool's input schema as a JSON schema object.
func (d toolDef) schema() map[string]any {
	s := map[string]any{"type": "object", "properties": d.Properties}
	if len(d.Required) > 0 {
		s["required"] = d.Required
	}
	return s
}

func str(desc string) map[string]any    { return map[string]any{"type": "string", "description": desc} }
func num(desc string) map[string]any    { return map[string]any{"type": "integer", "description": desc} }
func number(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }
func flag(desc string) map[string]any   { return map[string]any{"type": "boolean", "description": desc} }

// toolDefs are ralph's tools, in the order the model is offered them.
var toolDefs = slices.Concat(workspaceToolDefs, themeToolDefs, recipeToolDefs, snapshotToolDefs)

// toolNames lists the tools' names for error messages.
func toolNames() string {
	names := make([]string, len(toolDefs))
	for i, d := range toolDefs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// workspaceToolDefs are the tools over the workspace's files and
// commands.
var workspaceToolDefs = []toolDef{
	{
		Name:        "read_file",
		Description: "Read a text file of the workspace, with line numbers. Paths are relative to the workspace root. Shows at most 2000 lines at a time; use start_line and end_line (1-based, inclusive) for a range. Binary files and files over 1 MiB are refused.",
		Properties: map[string]any{
			"path":       str("file path relative to the workspace root"),
			"start_line": num("first line to show, 1-based (optional)"),
			"end_line":   num("last line to show, inclusive (optional)"),
		},
		Required: []string{"path"},
	},
	{
		Name:        "write_file",
		Description: "Create or overwrite a file with the given content. Parent directories are created. Paths are relative to the workspace root.",
		Properties: map[string]any{
			"path":    str("file path relative to the workspace root"),
			"content": str("the complete new content of the file"),
		},
		Required: []string{"path", "content"},
	},
	{
		Name:        "edit_file",
		Description: "Replace an exact string in a file. old_string must match the file exactly (whitespace included) and occur exactly once, unless replace_all is true; include enough surrounding lines to make it unique.",
		Properties: map[string]any{
			"path":        str("file path relative to the workspace root"),
			"old_string":  str("the exact text to replace"),
			"new_string":  str("the text to put in its place"),
			"replace_all": flag("replace every occurrence instead of requiring exactly one (optional)"),
		},
		Required: []string{"path", "old_string", "new_string"},
	},
	{
		Name:        "list_files",
		Description: "List the files and directories in a workspace directory (directories end with /). recursive lists the whole tree below it, skipping .git and node_modules. At most 1000 entries.",
		Properties: map[string]any{
			"dir":       str("directory relative to the workspace root; default the root"),
			"recursive": flag("list the whole tree (optional)"),
		},
	},
	{
		Name:        "grep",
		Description: "Search text files for a regular expression (Go RE2 syntax) and return matching lines as file:line: text. Skips .git, node_modules, binary files and files over 1 MiB. At most 200 matches.",
		Properties: map[string]any{
			"pattern": str("regular expression, e.g. `func \\w+Handler` or `(?i)todo`"),
			"path":    str("file or directory to search, relative to the workspace root; default the root"),
			"glob":    str("only search files whose name matches this glob, e.g. *.go (optional)"),
		},
		Required: []string{"pattern"},
	},
	{
		Name:        "run",
		Description: "Run a program with arguments (argv, no shell: to use shell syntax run [\"sh\", \"-c\", \"…\"]). Returns its combined output and exit status; long output is cut in the middle. The timeout defaults to 120 seconds, at most 600; on timeout the command and everything it started are killed.",
		Properties: map[string]any{
			"argv":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "program and arguments, e.g. [\"go\", \"test\", \"./...\"]"},
			"dir":             str("working directory relative to the workspace root; default the root"),
			"timeout_seconds": num("timeout in seconds (optional, default 120, at most 600)"),
		},
		Required: []string{"argv"},
	},
	{
		Name:        "plan_validate",
		Description: "Validate the plan in .ralph/plan.tsx the way the harness does, and list each finding as FAIL [id] plan.tsx:LINE:COL: message or WARN [id] plan.tsx:LINE:COL: message.",
		Properties:  map[string]any{},
	},
}

// toolbox runs the tools in one workspace.
type toolbox struct {
	ws         *workspace
	runTimeout time.Duration
	// unset names the variables the run tool's commands must not see:
	// the model's API keys.
	unset []string
	// stylesheet is where theme_modify writes when the applied theme
	// does not record one, relative to the workspace root.
	stylesheet string
	// log is handed to the snapshot store.
	log *slog.Logger
	// sandbox confines the run tool's commands; nil leaves them
	// unconfined.
	sandbox *sandbox.Settings
}

// call runs the named tool with its JSON input. A returned error is a
// failed tool call the model reads, never a failure of the iteration.
func (t *toolbox) call(ctx context.Context, name string, input json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	switch name {
	case "read_file":
		var in struct {
			Path      string `json:"path"`
			StartLine int    `json:"start_line"`
			EndLine   int    `json:"end_line"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.readFile(in.Path, in.StartLine, in.EndLine)
	case "write_file":
		var in struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		if in.Content == nil {
			return "", errors.New("content is missing: give the complete new content of the file")
		}
		return t.writeFile(in.Path, *in.Content)
	case "edit_file":
		var in struct {
			Path       string  `json:"path"`
			OldString  *string `json:"old_string"`
			NewString  *string `json:"new_string"`
			ReplaceAll bool    `json:"replace_all"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		if in.OldString == nil || in.NewString == nil {
			return "", errors.New("old_string and new_string are both required")
		}
		return t.editFile(in.Path, *in.OldString, *in.NewString, in.ReplaceAll)
	case "list_files":
		var in struct {
			Dir       string `json:"dir"`
			Recursive bool   `json:"recursive"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.listFiles(in.Dir, in.Recursive)
	case "grep":
		var in struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
			Glob    string `json:"glob"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.grep(in.Pattern, in.Path, in.Glob)
	case "run":
		var in struct {
			Argv    []string `json:"argv"`
			Dir     string   `json:"dir"`
			Timeout float64  `json:"timeout_seconds"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.run(ctx, in.Argv, in.Dir, time.Duration(in.Timeout*float64(time.Second)))
	case "plan_validate":
		return t.planValidate()
	case "theme_modify":
		var in struct {
			ShiftHue *float64 `json:"shift_hue"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.themeModify(in.ShiftHue)
	case "theme_list":
		return t.themeList()
	case "recipe_show":
		var in struct {
			ID string `json:"id"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.recipeShow(ctx, in.ID)
	case "recipe_list":
		return t.recipeList(ctx)
	case "snapshot_save":
		var in struct {
			Message string `json:"message"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.snapshotSave(ctx, in.Message)
	case "snapshot_list":
		return t.snapshotList(ctx)
	case "snapshot_diff":
		var in struct {
			Name string `json:"name"`
		}
		if err := decode(input, &in); err != nil {
			return "", err
		}
		return t.snapshotDiff(ctx, in.Name)
	}
	return "", fmt.Errorf("unknown tool %q; the tools are %s", name, toolNames())
}

func decode(input json.RawMessage, v any) error {
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("invalid input: %v", err)
	}
	return nil
}

// readText reads a regular text file of at most MaxReadBytes.
func (t *toolbox) readText(rel string) (string, []byte, error) {
	path, err := t.ws.resolve(rel)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, fmt.Errorf("%s does not exist", rel)
	case err != nil:
		return "", nil, fmt.Errorf("%s: %v", rel, err)
	case fi.IsDir():
		return "", nil, fmt.Errorf("%s is a directory; use list_files", rel)
	case !fi.Mode().IsRegular():
		return "", nil, fmt.Errorf("%s is not a regular file", rel)
	case fi.Size() > MaxReadBytes:
		return "", nil, fmt.Errorf("%s is too large to read (%d bytes, the limit is %d); use grep or run to look into it", rel, fi.Size(), MaxReadBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", rel, err)
	}
	if binary(data) {
		return "", nil, fmt.Errorf("%s is a binary file; read_file shows text files only", rel)
	}
	return path, data, nil
}

// binary reports whether data looks like a binary file: a NUL byte in
// its first 8000 bytes or invalid UTF-8.
func binary(data []byte) bool {
	head := data[:min(len(data), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Allow a rune cut at the end of the head.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

func (t *toolbox) readFile(rel string, start, end int) (string, error) {
	_, data, err := t.readText(rel)
	if err != nil {
		return "", err
	}
	if len(data) == 0 {
		return fmt.Sprintf("(%s is empty)", rel), nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	total := len(lines)
	if start <= 0 {
		start = 1
	}
	if start > total {
		return "", fmt.Errorf("start_line %d is past the end of %s (%d lines)", start, rel, total)
	}
	ranged := end > 0
	if end <= 0 || end > total {
		end = total
	}
	if end < start {
		return "", fmt.Errorf("end_line %d is before start_line %d", end, start)
	}
	cut := false
	if end-start+1 > maxReadLines {
		end, cut = start+maxReadLines-1, true
	}
	var b strings.Builder
	for i := start; i <= end; i++ {
		line := lines[i-1]
		if len(line) > maxLineChars {
			line = line[:maxLineChars] + " […line cut]"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i, line)
	}
	if cut || (!ranged && end < total) {
		fmt.Fprintf(&b, "[showing lines %d-%d of %d; use start_line and end_line for the rest]\n", start, end, total)
	}
	return b.String(), nil
}

func (t *toolbox) writeFile(rel, content string) (string, error) {
	path, err := t.ws.resolve(rel)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%s is a directory", rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create the directory of %s: %v", rel, err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %v", rel, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(content), rel), nil
}

func (t *toolbox) editFile(rel, old, repl string, all bool) (string, error) {
	if old == "" {
		return "", errors.New("old_string is empty: give the exact text to replace (use write_file to create a file)")
	}
	if old == repl {
		return "", errors.New("old_string and new_string are the same; nothing to change")
	}
	path, data, err := t.readText(rel)
	if err != nil {
		return "", err
	}
	text := string(data)
	n := strings.Count(text, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string was not found in %s (0 matches); read the file and copy the text exactly, whitespace included", rel)
	case n > 1 && !all:
		return "", fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to pick one, or set replace_all", n, rel)
	}
	text = strings.ReplaceAll(text, old, repl)
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", rel, err)
	}
	if err := os.WriteFile(path, []byte(text), fi.Mode().Perm()); err != nil {
		return "", fmt.Errorf("write %s: %v", rel, err)
	}
	if n == 1 {
		return fmt.Sprintf("replaced 1 occurrence in %s", rel), nil
	}
	return fmt.Sprintf("replaced %d occurrences in %s", n, rel), nil
}

// skipDir reports whether a recursive walk leaves out a directory.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

func (t *toolbox) listFiles(rel string, recursive bool) (string, error) {
	if rel == "" {
		rel = "."
	}
	path, err := t.ws.resolve(rel)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s does not exist", rel)
	case err != nil:
		return "", fmt.Errorf("%s: %v", rel, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s is a file, not a directory", rel)
	}
	var out []string
	more := false
	add := func(name string) bool {
		if len(out) >= maxListEntries {
			more = true
			return false
		}
		out = append(out, name)
		return true
	}
	if !recursive {
		entries, err := os.ReadDir(path)
		if err != nil {
			return "", fmt.Errorf("%s: %v", rel, err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			if !add(name) {
				break
			}
		}
	} else {
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == path {
				return nil
			}
			r, _ := filepath.Rel(path, p)
			r = filepath.ToSlash(r)
			if d.IsDir() {
				if skipDir(d.Name()) {
					return filepath.SkipDir
				}
				r += "/"
			}
			if !add(r) {
				return filepath.SkipAll
			}
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("%s: %v", rel, err)
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("(%s is empty)", rel), nil
	}
	s := strings.Join(out, "\n") + "\n"
	if more {
		s += fmt.Sprintf("[listing cut at %d entries; list a subdirectory for more]\n", maxListEntries)
	}
	return s, nil
}

func (t *toolbox) grep(pattern, rel, glob string) (string, error) {
	if pattern == "" {
		return "", errors.New("pattern is empty")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("invalid pattern: %v", err)
	}
	if glob != "" {
		if _, err := filepath.Match(glob, "x"); err != nil {
			return "", fmt.Errorf("invalid glob %q: %v", glob, err)
		}
	}
	if rel == "" {
		rel = "."
	}
	root, err := t.ws.resolve(rel)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("%s does not exist", rel)
	}
	var out []string
	more := false
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if glob != "" {
			if ok, _ := filepath.Match(glob, d.Name()); !ok {
				return nil
			}
		}
		if fi, err := d.Info(); err != nil || fi.Size() > MaxReadBytes {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || binary(data) {
			return nil
		}
		name := t.ws.rel(p)
		for i, line := range strings.Split(string(data), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if len(out) >= maxGrepMatches {
				more = true
				return filepath.SkipAll
			}
			if len(line) > maxLineChars {
				line = line[:maxLineChars] + " […line cut]"
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", name, i+1, line))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("grep %s: %v", rel, err)
	}
	if len(out) == 0 {
		return "no matches", nil
	}
	s := strings.Join(out, "\n") + "\n"
	if more {
		s += fmt.Sprintf("[stopped at %d matches; narrow the pattern, path or glob]\n", maxGrepMatches)
	}
	return s, nil
}

func (t *toolbox) run(ctx context.Context, argv []string, dirRel string, timeout time.Duration) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New(`argv is empty: give the program and its arguments, e.g. ["go", "test", "./..."]`)
	}
	if dirRel == "" {
		dirRel = "."
	}
	dir, err := t.ws.resolve(dirRel)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("working directory %s does not exist", dirRel)
	}
	if timeout <= 0 {
		timeout = t.runTimeout
	}
	timeout = min(timeout, MaxRunTimeout)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	program, _ := exec.LookPath(argv[0])
	conf, err := sandbox.Prepare(t.sandbox, sandbox.Target{Dir: t.ws.root, Program: program})
	if err != nil {
		return "", fmt.Errorf("cannot run %s: %v", argv[0], err)
	}
	spec := proc.Spec{Argv: argv, Dir: dir, Unset: t.unset, KillGrace: time.Second, EndEscaped: true}
	if conf != nil {
		defer conf.Close()
		rs, err := conf.Policy.Ruleset()
		if err != nil {
			return "", fmt.Errorf("cannot run %s: %v", argv[0], err)
		}
		defer rs.Close()
		spec.Env, spec.Ruleset = conf.Env(), rs
	}
	var out capped
	spec.OnLine, spec.OnStderrLine = out.line, out.line
	res, err := proc.Run(rctx, spec)
	text := out.String()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case rctx.Err() != nil:
		return "", fmt.Errorf("%s timed out after %s; it and every process it started were killed\n%s", argv[0], timeout, text)
	case err != nil:
		return "", fmt.Errorf("cannot run %s: %v", argv[0], err)
	case res.ExitCode != 0:
		return "", fmt.Errorf("exit status %d\n%s", res.ExitCode, text)
	}
	if text == "" {
		return "exit status 0 (no output)", nil
	}
	return text + "exit status 0", nil
}

// secretVars returns the names of the variables in environ (KEY=VALUE)
// that the run tool's commands must not see: the provider key variables,
// the one cfg.APIKeyEnv names, and any other that holds cfg.APIKey.
func secretVars(cfg Config, environ []string) []string {
	names := []string{EnvAnthropicKey, EnvOpenAIKey}
	if cfg.APIKeyEnv != "" && !slices.Contains(names, cfg.APIKeyEnv) {
		names = append(names, cfg.APIKeyEnv)
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if cfg.APIKey != "" && value == cfg.APIKey && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// capped collects output lines, keeping the head and the tail when there
// is more than maxRunOutput.
type capped struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int
}

func (c *capped) line(l string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := append([]byte(l), '\n')
	if len(c.head) < maxRunOutput/4 {
		c.head = append(c.head, b...)
		return
	}
	c.tail = append(c.tail, b...)
	// Let the tail grow to twice its size before cutting, so that a long
	// output is copied a few times, not once a line.
	if len(c.tail) > maxRunOutput*3/2 {
		c.cut()
	}
}

// cut drops the start of the tail beyond its share of maxRunOutput.
func (c *capped) cut() {
	if over := len(c.tail) - maxRunOutput*3/4; over > 0 {
		c.dropped += over
		c.tail = append([]byte(nil), c.tail[over:]...)
	}
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut()
	if c.dropped == 0 {
		return string(c.head) + string(c.tail)
	}
	return fmt.Sprintf("%s[… output truncated: %d bytes omitted …]\n%s", c.head, c.dropped, c.tail)
}

func (t *toolbox) planValidate() (string, error) {
	path, err := t.ws.resolve(planFile)
	if err != nil {
		return "", err
	}
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist; write the plan first", planFile)
	} else if err != nil {
		return "", fmt.Errorf("read %s: %v", planFile, err)
	}
	_, res := plan.Check("plan.tsx", src, plan.DefaultRegistries())
	if len(res.Failures) == 0 && len(res.Warnings) == 0 {
		return "OK: plan.tsx is valid, no findings", nil
	}
	var b strings.Builder
	for _, f := range res.Failures {
		b.WriteString(f.Format("FAIL", "plan.tsx") + "\n")
	}
	for _, f := range res.Warnings {
		b.WriteString(f.Format("WARN", "plan.tsx") + "\n")
	}
	if res.OK() {
		fmt.Fprintf(&b, "OK: no failures, %d warnings\n", len(res.Warnings))
	} else {
		fmt.Fprintf(&b, "%d failures, %d warnings: fix the failures and validate again\n", len(res.Failures), len(res.Warnings))
	}
	return b.String(), nil
}
