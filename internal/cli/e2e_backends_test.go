package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// scriptedServer is what every fake model server offers the end-to-end
// tests.
type scriptedServer interface {
	Scripted() []testutil.Request
	Remaining() int
}

// backendConfig returns a ralph.toml running the agent name from binary
// bin with env, plus extra lines in its [agents.NAME] table.
func agentTOML(name, bin string, env []string, extra string) string {
	return fmt.Sprintf(`agent = %q

[limits]
max_iterations = 6
idle_timeout = "2m"

[agents.%s]
binary = %q
env = %s
%s`, name, name, bin, tomlList(env), extra)
}

// fullRunTurns is the script of a whole run for a CLI whose write tool
// takes the path as given (abs turns a relative path into the one the
// tool wants): iteration 1 writes the plan and ends its turn, iteration 2
// writes the hero section and the app entry, then the summary and the
// status through the shell, and ends its turn.
//
// Calls in prep make a turn of their own at the start of iteration 2 (a
// CLI whose write tool does not create directories needs them made, and
// the calls of one turn may run in parallel).
func fullRunTurns(abs func(string) string, prep ...testutil.Call) []testutil.Turn {
	var prepTurns []testutil.Turn
	if len(prep) > 0 {
		prepTurns = append(prepTurns, testutil.Calls("", prep...))
	}
	return append(append([]testutil.Turn{
		testutil.Calls("I will write the plan.", testutil.WriteFile(abs(".ralph/plan.tsx"), appPlan)),
		testutil.Text("I wrote the plan to .ralph/plan.tsx."),
	}, prepTurns...),
		testutil.Calls("Building the hero section.",
			testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection),
			testutil.WriteFile(abs("src/App.tsx"), appEntry)),
		testutil.Calls("", plainFinishCall),
		testutil.Text("The hero section is built."),
	)
}

// plainFinishCall is finishCall without quotes inside the command, which
// some CLIs' shell tools re-quote on their own.
var plainFinishCall = testutil.Shell("sh", "-c", "echo Built the Tideline hero section. > .ralph/summary.md && printf complete > .ralph/status.txt")

// checkFullRun runs ralph in dir on the build task and checks a run of
// fullRunTurns by the agent name: plan validated, BUILD, gates passed, two
// iterations, the files written, the write and shell tool calls in the
// store under the CLI's own tool names, and tokens counted.
func checkFullRun(t *testing.T, dir, name string, srv scriptedServer, writeTool, shellTool string) runRecord {
	t.Helper()
	bin := buildRalph(t)
	res := runRalph(t, bin, dir, 4*time.Minute, "run", "build the Tideline landing page")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	for _, want := range []string{"plan validated (", "phase is now BUILD", "gates: has-summary pass", "completed"} {
		if !strings.Contains(res.out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.out)
		}
	}
	if rec.task.Reason != "completed" {
		t.Fatalf("task = %+v, want completed\n%s\nevents:\n%s", rec.task, res.out, rec.dump())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "src/sections/HeroSection.tsx")); string(got) != heroSection {
		t.Errorf("HeroSection.tsx = %q\nevents:\n%s", got, rec.dump())
	}
	if got := mustRead(t, dir, ".ralph/plan.tsx"); got != appPlan {
		t.Errorf("plan.tsx = %q", got)
	}
	if rec.task.Reason != "completed" || rec.task.Agent != name {
		t.Errorf("task = %+v, want completed by %s", rec.task, name)
	}
	if got := rec.outcomes(); got != "1:continue,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:continue,2:completed\nevents:\n%s", got, rec.dump())
	}
	writes := map[string]int{}
	var shell bool
	for _, e := range rec.of("tool_call") {
		switch e.Tool {
		case writeTool:
			for _, p := range []string{".ralph/plan.tsx", "src/sections/HeroSection.tsx"} {
				if strings.Contains(e.Data, filepath.Base(p)) {
					writes[p] = e.Iteration
				}
			}
		case shellTool:
			shell = shell || strings.Contains(e.Data, ".ralph/status.txt")
		}
	}
	if writes[".ralph/plan.tsx"] != 1 || writes["src/sections/HeroSection.tsx"] != 2 || !shell {
		t.Errorf("tool calls: %s plan.tsx in iteration %d, HeroSection.tsx in %d, %s status %v; want 1, 2, true\nevents:\n%s",
			writeTool, writes[".ralph/plan.tsx"], writes["src/sections/HeroSection.tsx"], shellTool, shell, rec.dump())
	}
	if rec.task.InputTokens <= 0 || rec.task.OutputTokens <= 0 {
		t.Errorf("task tokens %d in / %d out, want > 0", rec.task.InputTokens, rec.task.OutputTokens)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d turns left unused", srv.Remaining())
	}
	return rec
}

// A whole ralph run with the real Gemini CLI, in a workspace it was never
// told to trust, against the fake Gemini API.
func TestE2EGeminiRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	srv := testutil.NewGemini(t, fullRunTurns(func(rel string) string { return filepath.Join(dir, rel) })...)
	writeConfig(t, dir, agentTOML("gemini", testutil.GeminiBin(t), srv.GeminiHome(t), templateParser))
	checkFullRun(t, dir, "gemini", srv, "write_file", "run_shell_command")
}

// A whole ralph run with the real opencode, its provider given the way the
// issue's user gave it — OPENCODE_CONFIG_CONTENT in [agents.opencode] env
// — which ralph merges with its own instead of replacing. Iteration 1
// starts with a write outside the workspace: ralph's permission rule
// refuses it, the store records the refusal as a failed tool call, and
// the iteration goes on to write the plan.
func TestE2EOpencodeRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	turns := append([]testutil.Turn{testutil.Calls("First, a note outside.", testutil.WriteFile(outside, "nope\n"))},
		fullRunTurns(func(rel string) string { return filepath.Join(dir, rel) })...)
	srv := testutil.NewChat(t, turns...)
	env := append(testutil.OpencodeEnv(t), "OPENCODE_CONFIG_CONTENT="+srv.OpencodeConfig())
	writeConfig(t, dir, agentTOML("opencode", testutil.OpencodeBin(t), env, ""))
	rec := checkFullRun(t, dir, "opencode", srv, "write", "bash")
	if reqs := srv.Scripted(); len(reqs) == 0 || !strings.Contains(reqs[0].System, ".ralph/plan.tsx") {
		t.Errorf("ralph's system prompt did not reach the model")
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the write outside the workspace happened (stat: %v)", err)
	}
	var refused bool
	for _, e := range rec.of("tool_result") {
		refused = refused || e.Iteration == 1 && e.Tool == "write" && strings.HasPrefix(e.Text, "error: ") &&
			strings.Contains(e.Text, "prevents you from using this specific tool call")
	}
	if !refused {
		t.Errorf("no failed write in the store for the refused write\nevents:\n%s", rec.dump())
	}
}

// A whole ralph run with the real Qwen Code against the fake OpenAI chat
// completions endpoint.
func TestE2EQwenRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	srv := testutil.NewChat(t, fullRunTurns(func(rel string) string { return filepath.Join(dir, rel) })...)
	env, args := srv.QwenEnv(t)
	writeConfig(t, dir, agentTOML("qwen", testutil.QwenBin(t), env, "model = \"fake-coder\"\nargs = "+tomlList(args)+"\n"))
	checkFullRun(t, dir, "qwen", srv, "write_file", "run_shell_command")
	if reqs := srv.Scripted(); len(reqs) == 0 || !strings.Contains(reqs[0].System, ".ralph/plan.tsx") {
		t.Errorf("ralph's system prompt did not reach the model")
	}
}

// A whole ralph run with the real GitHub Copilot CLI, no GitHub login,
// the fake OpenAI chat completions endpoint as its own-key provider.
func TestE2ECopilotRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	// Copilot CLI's create tool does not make missing directories.
	srv := testutil.NewChat(t, fullRunTurns(func(rel string) string { return filepath.Join(dir, rel) },
		testutil.Shell("mkdir", "-p", "src/sections"))...)
	writeConfig(t, dir, agentTOML("copilot", testutil.CopilotBin(t), srv.CopilotEnv(t), ""))
	checkFullRun(t, dir, "copilot", srv, "create", "bash")
	if reqs := srv.Scripted(); len(reqs) == 0 || !strings.Contains(reqs[0].System, ".ralph/plan.tsx") {
		t.Errorf("ralph's system prompt did not reach the model")
	}
}
