package api

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

func newToolbox(t *testing.T) (*toolbox, string) {
	t.Helper()
	dir := t.TempDir()
	ws, err := newWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &toolbox{ws: ws, runTimeout: DefaultRunTimeout}, dir
}

func call(t *testing.T, tb *toolbox, name string, input any) (string, error) {
	t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return tb.call(context.Background(), name, b)
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantErr asserts a tool error that says want.
func wantErr(t *testing.T, out string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; output %q", out)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

func TestToolDefsAreValidSchemas(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range toolDefs {
		if d.Name == "" || d.Description == "" || seen[d.Name] {
			t.Errorf("bad tool %+v", d)
		}
		seen[d.Name] = true
		b, err := json.Marshal(d.schema())
		if err != nil || !strings.HasPrefix(string(b), `{"properties":`) {
			t.Errorf("%s schema %s: %v", d.Name, b, err)
		}
		for _, r := range d.Required {
			if _, ok := d.Properties[r]; !ok {
				t.Errorf("%s requires undeclared %s", d.Name, r)
			}
		}
	}
}

func TestReadFile(t *testing.T) {
	tb, dir := newToolbox(t)
	var lines []string
	for i := 1; i <= 2500; i++ {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	write(t, dir, "big.txt", strings.Join(lines, "\n")+"\n")
	write(t, dir, "empty.txt", "")

	out, err := call(t, tb, "read_file", map[string]any{"path": "big.txt", "start_line": 10, "end_line": 12})
	if err != nil || out != "    10\tline 10\n    11\tline 11\n    12\tline 12\n" {
		t.Errorf("range: %q, %v", out, err)
	}
	out, err = call(t, tb, "read_file", map[string]any{"path": "big.txt"})
	if err != nil || !strings.Contains(out, "  2000\tline 2000\n[showing lines 1-2000 of 2500") || strings.Contains(out, "line 2001") {
		t.Errorf("cap: %q…, %v", out[max(0, len(out)-200):], err)
	}
	out, err = call(t, tb, "read_file", map[string]any{"path": "empty.txt"})
	if err != nil || !strings.Contains(out, "empty") {
		t.Errorf("empty: %q, %v", out, err)
	}
	out, err = call(t, tb, "read_file", map[string]any{"path": "big.txt", "start_line": 3000})
	wantErr(t, out, err, "past the end of big.txt (2500 lines)")
	out, err = call(t, tb, "read_file", map[string]any{"path": "missing.txt"})
	wantErr(t, out, err, "missing.txt does not exist")
	out, err = call(t, tb, "read_file", map[string]any{"path": "."})
	wantErr(t, out, err, "is a directory")
	out, err = call(t, tb, "read_file", map[string]any{})
	wantErr(t, out, err, "path is empty")
	_, err = tb.call(context.Background(), "read_file", json.RawMessage(`{"path": 7}`))
	wantErr(t, "", err, "invalid input")
}

func TestReadFileRefusesBinaryAndHuge(t *testing.T) {
	tb, dir := newToolbox(t)
	write(t, dir, "img.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write(t, dir, "latin1.txt", "caf\xe9 cr\xe8me")
	out, err := call(t, tb, "read_file", map[string]any{"path": "img.png"})
	wantErr(t, out, err, "img.png is a binary file")
	out, err = call(t, tb, "read_file", map[string]any{"path": "latin1.txt"})
	wantErr(t, out, err, "binary")

	// A 50 MB file, sparse so the test stays cheap.
	f, err := os.Create(filepath.Join(dir, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err = call(t, tb, "read_file", map[string]any{"path": "huge.log"})
	wantErr(t, out, err, "huge.log is too large to read (52428800 bytes, the limit is 1048576)")
	out, err = call(t, tb, "edit_file", map[string]any{"path": "huge.log", "old_string": "a", "new_string": "b"})
	wantErr(t, out, err, "too large")
	out, err = call(t, tb, "grep", map[string]any{"pattern": "x"})
	if err != nil || out != "no matches" {
		t.Errorf("grep skips huge and binary files: %q, %v", out, err)
	}
}

func TestWriteAndEditFile(t *testing.T) {
	tb, dir := newToolbox(t)
	out, err := call(t, tb, "write_file", map[string]any{"path": "src/app/main.go", "content": "package main\n\nfunc a() {}\nfunc a() {}\n"})
	if err != nil || out != "wrote 38 bytes to src/app/main.go" {
		t.Fatalf("write: %q, %v", out, err)
	}
	out, err = call(t, tb, "write_file", map[string]any{"path": "x.txt"})
	wantErr(t, out, err, "content is missing")
	out, err = call(t, tb, "write_file", map[string]any{"path": "src", "content": "x"})
	wantErr(t, out, err, "src is a directory")

	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "func a() {}", "new_string": "func b() {}"})
	wantErr(t, out, err, "occurs 2 times in src/app/main.go")
	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "func z()", "new_string": "x"})
	wantErr(t, out, err, "not found in src/app/main.go (0 matches)")
	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "", "new_string": "x"})
	wantErr(t, out, err, "old_string is empty")
	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "package main"})
	wantErr(t, out, err, "both required")

	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "package main", "new_string": "package app"})
	if err != nil || out != "replaced 1 occurrence in src/app/main.go" {
		t.Fatalf("edit: %q, %v", out, err)
	}
	out, err = call(t, tb, "edit_file", map[string]any{"path": "src/app/main.go", "old_string": "func a", "new_string": "func c", "replace_all": true})
	if err != nil || out != "replaced 2 occurrences in src/app/main.go" {
		t.Fatalf("replace_all: %q, %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "src/app/main.go"))
	if string(b) != "package app\n\nfunc c() {}\nfunc c() {}\n" {
		t.Errorf("file = %q", b)
	}
}

func TestListFilesAndGrep(t *testing.T) {
	tb, dir := newToolbox(t)
	write(t, dir, "a.go", "package a\n// TODO: one\n")
	write(t, dir, "sub/b.go", "package b\nfunc Handler() {} // todo two\n")
	write(t, dir, "sub/c.txt", "TODO three\n")
	write(t, dir, ".git/config", "TODO hidden\n")
	write(t, dir, "node_modules/x/y.js", "TODO hidden\n")

	out, err := call(t, tb, "list_files", map[string]any{})
	if err != nil || out != ".git/\na.go\nnode_modules/\nsub/\n" {
		t.Errorf("list: %q, %v", out, err)
	}
	out, err = call(t, tb, "list_files", map[string]any{"dir": ".", "recursive": true})
	if err != nil || out != "a.go\nsub/\nsub/b.go\nsub/c.txt\n" {
		t.Errorf("recursive: %q, %v", out, err)
	}
	out, err = call(t, tb, "list_files", map[string]any{"dir": "a.go"})
	wantErr(t, out, err, "is a file")
	out, err = call(t, tb, "list_files", map[string]any{"dir": "nope"})
	wantErr(t, out, err, "does not exist")

	out, err = call(t, tb, "grep", map[string]any{"pattern": "(?i)todo"})
	if err != nil || out != "a.go:2: // TODO: one\nsub/b.go:2: func Handler() {} // todo two\nsub/c.txt:1: TODO three\n" {
		t.Errorf("grep: %q, %v", out, err)
	}
	out, err = call(t, tb, "grep", map[string]any{"pattern": "TODO", "path": "sub", "glob": "*.txt"})
	if err != nil || out != "sub/c.txt:1: TODO three\n" {
		t.Errorf("grep glob: %q, %v", out, err)
	}
	out, err = call(t, tb, "grep", map[string]any{"pattern": "func \\w+Handler|Handler\\("})
	if err != nil || !strings.HasPrefix(out, "sub/b.go:2:") {
		t.Errorf("grep regexp: %q, %v", out, err)
	}
	out, err = call(t, tb, "grep", map[string]any{"pattern": "("})
	wantErr(t, out, err, "invalid pattern")
	out, err = call(t, tb, "grep", map[string]any{"pattern": "x", "path": "/etc"})
	wantErr(t, out, err, "absolute")

	var many strings.Builder
	for range 300 {
		many.WriteString("match\n")
	}
	write(t, dir, "many.txt", many.String())
	out, err = call(t, tb, "grep", map[string]any{"pattern": "match", "path": "many.txt"})
	if err != nil || strings.Count(out, "many.txt:") != 200 || !strings.Contains(out, "stopped at 200 matches") {
		t.Errorf("grep cap: %v, %d matches", err, strings.Count(out, "many.txt:"))
	}
}

func TestRun(t *testing.T) {
	tb, dir := newToolbox(t)
	write(t, dir, "sub/f.txt", "x")
	out, err := call(t, tb, "run", map[string]any{"argv": []string{"ls"}, "dir": "sub"})
	if err != nil || out != "f.txt\nexit status 0" {
		t.Errorf("run: %q, %v", out, err)
	}
	// argv is never a shell line: the metacharacters are plain arguments.
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"echo", "a;", "rm", "-rf", "$HOME", "|", "x"}})
	if err != nil || out != "a; rm -rf $HOME | x\nexit status 0" {
		t.Errorf("no shell: %q, %v", out, err)
	}
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"sh", "-c", "echo oops >&2; exit 3"}})
	wantErr(t, out, err, "exit status 3\noops")
	out, err = call(t, tb, "run", map[string]any{"argv": []string{}})
	wantErr(t, out, err, "argv is empty")
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"no-such-program-ralph"}})
	wantErr(t, out, err, "cannot run no-such-program-ralph")
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"true"}, "dir": "../.."})
	wantErr(t, out, err, "leaves the workspace")
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"true"}, "dir": "missing"})
	wantErr(t, out, err, "does not exist")

	// Long output is cut in the middle, with a note.
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"seq", "1", "100000"}})
	if err != nil || !strings.HasPrefix(out, "1\n2\n") || !strings.Contains(out, "output truncated") ||
		!strings.HasSuffix(out, "100000\nexit status 0") || len(out) > maxRunOutput+200 {
		t.Errorf("truncation: %d bytes, %v", len(out), err)
	}
}

// Confined by the sandbox, the run tool's commands write the workspace
// but cannot read or write outside it.
func TestRunConfined(t *testing.T) {
	if !sandbox.Probe().Available() {
		t.Skip("no Landlock here")
	}
	tb, dir := newToolbox(t)
	tb.sandbox = &sandbox.Settings{Mode: sandbox.ModeWorkspace}
	outside := t.TempDir()
	write(t, outside, "secret", "s3cret")
	out, err := call(t, tb, "run", map[string]any{"argv": []string{"sh", "-c", `echo in > inside; cat "$0/secret"; echo x > "$0/escaped"`, outside}})
	if strings.Contains(out, "s3cret") || err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("run = %q, %v; want the read refused", out, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Error("the command wrote outside the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside")); err != nil || string(b) != "in\n" {
		t.Errorf("write inside = %q, %v", b, err)
	}
}

// The model's API keys do not reach the commands it runs.
func TestRunScrubsAPIKeys(t *testing.T) {
	t.Setenv(EnvAnthropicKey, "sk-ant-secret")
	t.Setenv(EnvOpenAIKey, "sk-openai-secret")
	t.Setenv("RALPH_TEST_MODEL_KEY", "sk-custom-secret")
	t.Setenv("RALPH_TEST_KEY_COPY", "sk-custom-secret")
	t.Setenv("RALPH_TEST_KEEP", "kept")
	tb, _ := newToolbox(t)
	tb.unset = secretVars(Config{APIKeyEnv: "RALPH_TEST_MODEL_KEY", APIKey: "sk-custom-secret"}, os.Environ())
	out, err := call(t, tb, "run", map[string]any{"argv": []string{"sh", "-c",
		`echo ${ANTHROPIC_API_KEY:-unset} ${OPENAI_API_KEY:-unset} ${RALPH_TEST_MODEL_KEY:-unset} ${RALPH_TEST_KEY_COPY:-unset} $RALPH_TEST_KEEP`}})
	if want := "unset unset unset unset kept\nexit status 0"; err != nil || out != want {
		t.Errorf("run saw %q, %v; want %q", out, err, want)
	}
}

// A command that never ends is killed at its timeout with everything it
// started.
func TestRunTimeoutKillsGroup(t *testing.T) {
	tb, dir := newToolbox(t)
	start := time.Now()
	out, err := call(t, tb, "run", map[string]any{
		"argv":            []string{"sh", "-c", "sleep 300 & echo $! > child.pid; echo started; wait"},
		"timeout_seconds": 1,
	})
	wantErr(t, out, err, "sh timed out after 1s; it and every process it started were killed\nstarted")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	b, rerr := os.ReadFile(filepath.Join(dir, "child.pid"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the background child %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunTimeoutCapped(t *testing.T) {
	tb, _ := newToolbox(t)
	tb.runTimeout = 50 * time.Millisecond
	out, err := call(t, tb, "run", map[string]any{"argv": []string{"sleep", "5"}})
	wantErr(t, out, err, "timed out after 50ms")
	// Ask for a day: held to MaxRunTimeout (checked through the message
	// of a command that fails fast).
	out, err = call(t, tb, "run", map[string]any{"argv": []string{"false"}, "timeout_seconds": 86400})
	wantErr(t, out, err, "exit status 1")
}

func TestPlanValidate(t *testing.T) {
	tb, dir := newToolbox(t)
	out, err := call(t, tb, "plan_validate", map[string]any{})
	wantErr(t, out, err, ".ralph/plan.tsx does not exist")

	write(t, dir, ".ralph/plan.tsx", "<App name=\"x\">\n  <Screen name=\"home\">\n  </Screen>\n</App>\n")
	out, err = call(t, tb, "plan_validate", map[string]any{})
	if err != nil || !strings.Contains(out, "FAIL [has-theme] plan.tsx:1:1: ") || !strings.Contains(out, "FAIL [no-empty-screens] plan.tsx:2:3: ") {
		t.Errorf("findings: %q, %v", out, err)
	}

	write(t, dir, ".ralph/plan.tsx", "<App name=\"x\">\n  <Screen\n")
	out, err = call(t, tb, "plan_validate", map[string]any{})
	if err != nil || !strings.HasPrefix(out, "FAIL [parseable] plan.tsx:") {
		t.Errorf("syntax: %q, %v", out, err)
	}

	write(t, dir, ".ralph/plan.tsx", `<Plan name="p">
  <Step name="one">Do the thing.</Step>
</Plan>
`)
	out, err = call(t, tb, "plan_validate", map[string]any{})
	if err != nil || !strings.HasPrefix(out, "OK") {
		t.Errorf("valid plan: %q, %v", out, err)
	}
}

func TestUnknownToolAndBadJSON(t *testing.T) {
	tb, _ := newToolbox(t)
	_, err := tb.call(context.Background(), "rm_rf", json.RawMessage(`{}`))
	wantErr(t, "", err, `unknown tool "rm_rf"`)
	_, err = tb.call(context.Background(), "write_file", json.RawMessage(`{"path": "a", "content": `))
	wantErr(t, "", err, "invalid input")
	out, err := tb.call(context.Background(), "list_files", nil)
	if err != nil {
		t.Errorf("empty input: %q, %v", out, err)
	}
}

func TestPathErrorsRead(t *testing.T) {
	tb := &toolbox{ws: &workspace{root: "/nonexistent", real: "/nonexistent"}}
	for p, want := range map[string]string{
		"/etc/passwd": `path "/etc/passwd" is absolute: give a path relative to the workspace root`,
		"../x":        `path "../x" leaves the workspace`,
		"a/../../x":   `path "a/../../x" leaves the workspace`,
	} {
		if _, err := tb.readFile(p, 0, 0); err == nil || err.Error() != want {
			t.Errorf("readFile(%q) = %v, want %s", p, err, want)
		}
	}
}
