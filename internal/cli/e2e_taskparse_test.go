package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// templateParser ends a ralph.toml with [task] parser = "template": the
// runs of tests about something else do not ask the agent to split the
// task first (an agent with a single-answer mode would take a scripted
// turn, or, hanging, hold the run for the answer's timeout).
const templateParser = "\n[task]\nparser = \"template\"\n"

// isTaskParse recognises the task parser's request: its system prompt.
func isTaskParse(r testutil.Request) bool {
	return strings.Contains(r.System, "You are the task intake step of ralph")
}

// With the real Claude Code, no API key for ralph's own api agent and the
// default [task] parser: the task is split by one single-answer call of
// Claude Code (no tools), task.md holds the requirements, and the run goes
// on as usual. With the provider refusing that call, the template is
// written and the run says why in one plain line.
func TestE2EClaudeTaskParse(t *testing.T) {
	e2eShort(t)
	answer, _ := json.Marshal(map[string]any{
		"type": "bugfix", "title": "Hero names the product",
		"requirements": []map[string]any{
			{"marker": "FIX", "text": "the hero shows the product name Tideline"},
			{"marker": "MODIFY", "text": "the hero copy stays one line"},
		},
		"affected_files": []string{"src/sections/HeroSection.tsx"},
	})
	for _, tc := range []struct {
		name   string
		parse  testutil.Turn
		want   string
		taskMD string
	}{
		{"one answer", testutil.Text(string(answer)),
			"(bugfix, task.md split into requirements by claude, in one answer): fix the hero",
			"- [FIX] the hero shows the product name Tideline\n- [MODIFY] the hero copy stays one line\n"},
		{"provider refuses", testutil.Turn{Status: 400, Message: "the fake server refuses the task parse"},
			"(bugfix, task.md written from the template (model error: ",
			"Type: pending (likely bugfix)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := testutil.GitRepo(t)
			abs := func(rel string) string { return dir + "/" + rel }
			srv := testutil.NewAnthropic(t,
				testutil.Calls("Fixing the hero.",
					testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection),
					testutil.WriteFile(abs("src/App.tsx"), appEntry),
					testutil.Shell("sh", "-c", "printf 'The hero names Tideline.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt"),
				),
				testutil.Text("The hero is fixed."),
			)
			srv.ToolLess = func(r testutil.Request) (testutil.Turn, bool) { return tc.parse, isTaskParse(r) }
			writeConfig(t, dir, claudeConfig(t, srv, "", "CLAUDE_CODE_MAX_RETRIES=0"))
			bin := buildRalph(t)

			res := runRalph(t, bin, dir, 4*time.Minute, "run", "fix the hero: it must name the product")
			if res.code != 0 {
				t.Fatalf("exit %d, want 0\n%s", res.code, res.out)
			}
			var taskLine string
			for line := range strings.Lines(res.out) {
				if strings.Contains(line, "ralph: task 1 (") {
					taskLine = line
				}
			}
			t.Logf("%s", strings.TrimSpace(taskLine))
			if !strings.Contains(taskLine, tc.want) || !strings.HasSuffix(strings.TrimSpace(taskLine), "): fix the hero: it must name the product") {
				t.Errorf("task line = %q, want it to contain %q and end with the message\n%s", taskLine, tc.want, res.out)
			}
			if !strings.Contains(res.out, "completed") {
				t.Errorf("the run did not complete:\n%s", res.out)
			}
			if md := mustRead(t, dir, ".ralph/task.md"); !strings.Contains(md, tc.taskMD) {
				t.Errorf("task.md lacks %q:\n%s", tc.taskMD, md)
			}
			// One parse call, offering no tools and carrying the message
			// (Claude Code may retry a refused request on its own).
			parses, tools := 0, 0
			for _, r := range srv.Requests() {
				if isTaskParse(r) && strings.Contains(r.UserText, "fix the hero: it must name the product") {
					parses++
					tools += len(r.Tools)
				}
			}
			if parses == 0 || tools != 0 || (tc.name == "one answer" && parses != 1) {
				t.Errorf("task parse requests = %d offering %d tools; want one (or its retries) without tools", parses, tools)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d turns left: the run did not proceed as usual", srv.Remaining())
			}
		})
	}
}

// With the real Codex and no API key for ralph's api agent: one codex exec
// answers the parse (read-only, in an empty directory), task.md holds the
// requirements, and the run goes on as usual.
func TestE2ECodexTaskParse(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	answer := heroFixAnswer()
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t,
		testutil.Text(answer),
		testutil.Calls("Fixing the hero.", testutil.WriteFile("src/sections/HeroSection.tsx", heroSection)),
		testutil.Calls("", testutil.WriteFile("src/App.tsx", appEntry)),
		testutil.Calls("", finishCall),
		testutil.Text("The hero is fixed."),
	)
	writeConfig(t, dir, codexConfig(t, srv))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "fix the hero: it must name the product")
	checkParsedOnce(t, res, dir, "codex", srv.Requests(), srv.Remaining())
}

// With the real Gemini CLI: one headless gemini --prompt answers the
// parse, in an empty directory, and the run goes on as usual.
func TestE2EGeminiTaskParse(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	answer := heroFixAnswer()
	dir := testutil.GitRepo(t)
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	srv := testutil.NewGemini(t,
		testutil.Text(answer),
		testutil.Calls("Fixing the hero.", testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection), testutil.WriteFile(abs("src/App.tsx"), appEntry)),
		testutil.Calls("", testutil.WriteFile(abs(".ralph/summary.md"), "The hero names Tideline.\n"), testutil.WriteFile(abs(".ralph/status.txt"), "complete")),
		testutil.Text("The hero is fixed."),
	)
	writeConfig(t, dir, agentTOML("gemini", testutil.GeminiBin(t), srv.GeminiHome(t), ""))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "fix the hero: it must name the product")
	checkParsedOnce(t, res, dir, "gemini", srv.Requests(), srv.Remaining())
}

// heroFixAnswer is a task parser's answer splitting "fix the hero" into
// one requirement.
func heroFixAnswer() string {
	b, _ := json.Marshal(map[string]any{
		"type": "bugfix", "title": "Hero names the product",
		"requirements": []map[string]any{{"marker": "FIX", "text": "the hero shows the product name Tideline"}},
	})
	return string(b)
}

// checkParsedOnce checks a run whose task agent split the task in one
// answer: the run completed, says which agent split it, task.md holds the
// requirement, the fake model saw exactly one parse request, and every
// scripted turn was taken.
func checkParsedOnce(t *testing.T, res ralphResult, dir, agent string, reqs []testutil.Request, remaining int) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.out)
	}
	for _, want := range []string{"ralph: task 1 (bugfix, task.md split into requirements by " + agent + ", in one answer): fix the hero", "completed"} {
		if !strings.Contains(res.out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.out)
		}
	}
	if md := mustRead(t, dir, ".ralph/task.md"); !strings.Contains(md, "- [FIX] the hero shows the product name Tideline\n") {
		t.Errorf("task.md lacks the requirement:\n%s", md)
	}
	parses := 0
	for _, r := range reqs {
		if isTaskParse(r) {
			parses++
		}
	}
	if parses != 1 || remaining != 0 {
		t.Errorf("task parse requests = %d, turns left = %d; want 1, 0", parses, remaining)
	}
}
