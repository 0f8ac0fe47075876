package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// claudeConfig returns a ralph.toml that runs the real Claude Code against
// srv with an isolated HOME, plus extra [limits] lines.
func claudeConfig(t *testing.T, srv *testutil.AnthropicServer, limits string, env ...string) string {
	bin := testutil.ClaudeBin(t)
	env = append(append(srv.Env(), "HOME="+t.TempDir()), env...)
	return fmt.Sprintf(`agent = "claude"

[limits]
max_iterations = 6
idle_timeout = "2m"
%s

[agents.claude]
binary = %q
model = "claude-sonnet-4-5"
max_turns = 10
env = %s
`, limits, bin, tomlList(env))
}

// A whole ralph run with the real Claude Code: iteration 1 writes the
// plan, the harness validates it at the top of iteration 2 and flips to
// BUILD, iteration 2 builds, writes the summary and asks to complete, the
// gates pass. The store holds the CLI's tool calls and its cost.
func TestE2EClaudeRun(t *testing.T) {
	e2eShort(t)
	t.Parallel()
	dir := testutil.GitRepo(t)
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	srv := testutil.NewAnthropic(t,
		// Iteration 1 (PLAN): write the plan, then end the turn.
		testutil.Calls("I will write the plan.", testutil.WriteFile(abs(".ralph/plan.tsx"), appPlan)),
		testutil.Text("I wrote the plan to .ralph/plan.tsx."),
		// Iteration 2 (BUILD): the section, the summary, the status.
		testutil.Calls("Building the hero section.",
			testutil.WriteFile(abs("src/sections/HeroSection.tsx"), heroSection),
			testutil.Shell("sh", "-c", "printf 'Built the Tideline hero section.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt"),
		),
		testutil.Text("The hero section is built."),
	)
	writeConfig(t, dir, claudeConfig(t, srv, ""))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "build the Tideline landing page")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	for _, want := range []string{"plan validated (0 warnings); phase is now BUILD", "gates: has-summary pass", "completed"} {
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
	if got := strings.TrimSpace(mustRead(t, dir, ".ralph/phase.txt")); got != "build" {
		t.Errorf("phase = %q, want build", got)
	}

	if rec.task.Reason != "completed" || rec.task.Agent != "claude" {
		t.Errorf("task = %+v, want completed by claude", rec.task)
	}
	if got := rec.outcomes(); got != "1:continue,2:completed" {
		t.Errorf("iteration outcomes = %s, want 1:continue,2:completed\nevents:\n%s", got, rec.dump())
	}
	if len(rec.its) == 2 && (rec.its[0].Phase != "plan" || rec.its[1].Phase != "build") {
		t.Errorf("iteration phases = %s, %s; want plan, build", rec.its[0].Phase, rec.its[1].Phase)
	}
	// The tool calls the CLI made, with their input.
	writes := map[string]int{}
	var bash bool
	for _, e := range rec.of("tool_call") {
		switch e.Tool {
		case "Write":
			for _, p := range []string{".ralph/plan.tsx", "src/sections/HeroSection.tsx"} {
				if strings.Contains(e.Data, abs(p)) {
					writes[p] = e.Iteration
				}
			}
		case "Bash":
			bash = bash || strings.Contains(e.Data, ".ralph/status.txt")
		}
	}
	if writes[".ralph/plan.tsx"] != 1 || writes["src/sections/HeroSection.tsx"] != 2 || !bash {
		t.Errorf("tool calls: Write plan.tsx in iteration %d, HeroSection.tsx in %d, Bash status %v; want 1, 2, true\nevents:\n%s",
			writes[".ralph/plan.tsx"], writes["src/sections/HeroSection.tsx"], bash, rec.dump())
	}
	if len(rec.of("plan-validated")) != 1 {
		t.Errorf("plan-validated events = %d, want 1", len(rec.of("plan-validated")))
	}
	// The cost Claude Code reported, summed per task.
	if rec.task.CostUSD <= 0 || rec.task.InputTokens <= 0 || rec.task.OutputTokens <= 0 {
		t.Errorf("task cost %.6f, tokens %d in / %d out; want all > 0", rec.task.CostUSD, rec.task.InputTokens, rec.task.OutputTokens)
	}
	for _, it := range rec.its {
		if it.CostUSD <= 0 {
			t.Errorf("iteration %d cost = %v, want > 0", it.Number, it.CostUSD)
		}
	}
	// Every iteration was a fresh invocation: two model requests each.
	if n := len(srv.Scripted()); n != 4 || srv.Remaining() != 0 {
		t.Errorf("scripted requests = %d, turns left = %d; want 4, 0", n, srv.Remaining())
	}
}
