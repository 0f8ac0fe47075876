package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// codexConfig returns a ralph.toml that runs the real Codex against srv
// from an isolated CODEX_HOME and HOME.
func codexConfig(t *testing.T, srv *testutil.ResponsesServer) string {
	bin := testutil.CodexBin(t)
	env := append(srv.CodexHome(t), "HOME="+t.TempDir())
	return fmt.Sprintf(`agent = "codex"

[limits]
max_iterations = 6
idle_timeout = "2m"

[agents.codex]
binary = %q
env = %s
`, bin, tomlList(env))
}

// finishCall writes the summary and asks to complete, through the shell.
var finishCall = testutil.Shell("sh", "-c", "printf 'Built the Tideline hero section.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt")

// A whole ralph run with the real Codex: plan, validation, build, gates.
func TestE2ECodexRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t,
		testutil.Calls("I will write the plan.", testutil.WriteFile(".ralph/plan.tsx", appPlan)),
		testutil.Text("I wrote the plan to .ralph/plan.tsx."),
		testutil.Calls("Building the hero section.", testutil.WriteFile("src/sections/HeroSection.tsx", heroSection)),
		testutil.Calls("", testutil.WriteFile("src/App.tsx", appEntry)),
		testutil.Calls("", finishCall),
		testutil.Text("The hero section is built."),
	)
	writeConfig(t, dir, codexConfig(t, srv)+templateParser)
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
	if got := mustRead(t, dir, "src/sections/HeroSection.tsx"); got != heroSection {
		t.Errorf("HeroSection.tsx = %q", got)
	}
	if got := mustRead(t, dir, ".ralph/plan.tsx"); got != appPlan {
		t.Errorf("plan.tsx = %q", got)
	}
	if rec.task.Reason != "completed" || rec.task.Agent != "codex" {
		t.Errorf("task = %+v, want completed by codex", rec.task)
	}
	if got := rec.outcomes(); got != "1:continue,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:continue,2:completed\nevents:\n%s", got, rec.dump())
	}
	changes := map[string]int{}
	var shell bool
	for _, e := range rec.of("tool_call") {
		switch e.Tool {
		case "file_change":
			for _, p := range []string{".ralph/plan.tsx", "src/sections/HeroSection.tsx"} {
				if strings.Contains(e.Data, p) {
					changes[p] = e.Iteration
				}
			}
		case "command_execution":
			shell = shell || strings.Contains(e.Data, ".ralph/status.txt")
		}
	}
	if changes[".ralph/plan.tsx"] != 1 || changes["src/sections/HeroSection.tsx"] != 2 || !shell {
		t.Errorf("tool calls: plan.tsx in iteration %d, HeroSection.tsx in %d, shell status %v; want 1, 2, true\nevents:\n%s",
			changes[".ralph/plan.tsx"], changes["src/sections/HeroSection.tsx"], shell, rec.dump())
	}
	// Codex reports tokens, not dollars.
	if rec.task.InputTokens <= 0 || rec.task.OutputTokens <= 0 {
		t.Errorf("task tokens %d in / %d out, want > 0", rec.task.InputTokens, rec.task.OutputTokens)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d turns left unused", srv.Remaining())
	}
}

// A turn the provider fails (response.failed) is an agent error: ralph
// records it and the next iteration, a fresh codex, does the work.
func TestE2ECodexFailedTurnRecovers(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t,
		testutil.Turn{Failed: true, Message: "the model exploded"},
		testutil.Calls("Finishing.", finishCall),
		testutil.Text("Done."),
	)
	writeConfig(t, dir, codexConfig(t, srv)+templateParser)
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "write a summary")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	if got := rec.outcomes(); got != "1:agent-error,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:agent-error,2:completed\nevents:\n%s", got, rec.dump())
	}
	var recorded bool
	for _, e := range rec.of("agent-error") {
		recorded = recorded || e.Iteration == 1 && strings.Contains(e.Text, "the model exploded")
	}
	if !recorded {
		t.Errorf("no agent-error event with the provider's message in iteration 1\nevents:\n%s", rec.dump())
	}
	if !strings.Contains(res.out, "the model exploded") {
		t.Errorf("output does not show the failure:\n%s", res.out)
	}
	if rec.task.Reason != "completed" {
		t.Errorf("task reason = %q, want completed", rec.task.Reason)
	}
}
