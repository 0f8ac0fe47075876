package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// Fallback on exhaustion, with the real Claude Code and the real Codex:
// claude's provider answers 429 with a usage limit that resets in five
// hours, beyond max_wait, so instead of waiting ralph says so and runs the
// next iteration on codex, which completes the task. Both backends'
// iterations, with their usage, are in the store.
func TestE2EFallbackClaudeToCodex(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	anth := testutil.NewAnthropic(t, testutil.Turn{Status: 429, RetryAfter: "18000", Repeat: -1,
		Message: "Your organization has hit its usage limit. Your limit resets in 5 hours."})
	oai := testutil.NewResponses(t,
		testutil.Calls("Finishing.", finishCall),
		testutil.Text("Done."),
	)
	claudeEnv := append(append(anth.Env(), "HOME="+t.TempDir()), "CLAUDE_CODE_MAX_RETRIES=0")
	codexEnv := append(oai.CodexHome(t), "HOME="+t.TempDir())
	writeConfig(t, dir, fmt.Sprintf(`agent = ["claude", "codex"]

[limits]
max_iterations = 4
idle_timeout = "2m"
max_wait = "1h"

[agents.claude]
binary = %q
model = "claude-sonnet-4-5"
env = %s

[agents.codex]
binary = %q
env = %s
`, testutil.ClaudeBin(t), tomlList(claudeEnv), testutil.CodexBin(t), tomlList(codexEnv)))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "write a summary")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	t.Logf("output:\n%s", res.out)
	if !strings.Contains(res.out, "claude ran out") || !strings.Contains(res.out, "iteration 2 runs on codex") {
		t.Errorf("output does not show the switch:\n%s", res.out)
	}
	if got := rec.outcomes(); got != "1:agent-exhausted,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:agent-exhausted,2:completed\nevents:\n%s", got, rec.dump())
	}
	var switched bool
	for _, e := range rec.of("fallback") {
		switched = switched || e.Iteration == 1 && strings.Contains(e.Text, "resets in 5 hours")
	}
	if !switched {
		t.Errorf("no fallback event in iteration 1 with claude's message\nevents:\n%s", rec.dump())
	}
	if n := len(rec.of("agent-error")) + len(rec.of("stall")); n != 0 {
		t.Errorf("running out counted as %d failures or stalls\nevents:\n%s", n, rec.dump())
	}
	if rec.task.Reason != "completed" || rec.task.Agent != "claude,codex" {
		t.Errorf("task = %+v, want completed by claude,codex", rec.task)
	}
	// Codex's tokens are in its iteration and the task.
	if len(rec.its) == 2 && (rec.its[1].InputTokens <= 0 || rec.task.InputTokens < rec.its[1].InputTokens) {
		t.Errorf("iteration 2 tokens %d, task %d", rec.its[1].InputTokens, rec.task.InputTokens)
	}
	if n := len(anth.Requests()); n == 0 {
		t.Error("claude never asked its provider")
	}
	if oai.Remaining() != 0 {
		t.Errorf("codex left %d turns", oai.Remaining())
	}
	if got := mustRead(t, dir, filepath.Join(".ralph", "summary.md")); !strings.Contains(got, "Tideline") {
		t.Errorf("summary = %q", got)
	}
}
